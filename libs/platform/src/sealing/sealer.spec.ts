import { createCipheriv, randomBytes } from 'node:crypto';
import type { MasterKey } from '../config/config';
import { Keyring } from './keyring';
import { SealedRecordUnreadable, Sealer, type Envelope } from './sealer';

const k1: MasterKey = { id: 'k1', key: randomBytes(32) };
const k2: MasterKey = { id: 'k2', key: randomBytes(32) };
const AD = 'openbot.sealed.v1:0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b:test.purpose';
const SECRET = 'sk-live-THE-PROVIDER-API-KEY-0123456789';

function flipped(envelope: Envelope, index: number): Envelope {
  const data = Buffer.from(envelope.data);
  data[index] = data[index]! ^ 0x01;
  return { keyId: envelope.keyId, data };
}

describe('Sealer', () => {
  const sealer = new Sealer(new Keyring(k1));

  it('[SEC-01] a sealed value opens to the same bytes under the same associated data', () => {
    for (const plain of [SECRET, '', '{"a":1}', 'ü'.repeat(10_000)]) {
      const envelope = sealer.seal(Buffer.from(plain, 'utf8'), AD);
      expect(envelope.keyId).toBe('k1');
      expect(sealer.open(envelope, AD).toString('utf8')).toBe(plain);
    }
  });

  it('[SEC-01] binary values round-trip exactly', () => {
    const plain = randomBytes(4096);
    expect(sealer.open(sealer.seal(plain, AD), AD).equals(plain)).toBe(true);
  });

  it('[SEC-01] the envelope never contains the plaintext, in any common encoding', () => {
    const envelope = sealer.seal(Buffer.from(SECRET, 'utf8'), AD);
    const data = envelope.data;
    expect(data.includes(Buffer.from(SECRET, 'utf8'))).toBe(false);
    expect(data.includes(Buffer.from('THE-PROVIDER'))).toBe(false);
    expect(data.toString('latin1')).not.toContain('PROVIDER');
    expect(data.toString('base64')).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 16));
    expect(data.toString('hex')).not.toContain(Buffer.from(SECRET).toString('hex').slice(0, 16));
    // The master key and the associated data are not stored either.
    expect(data.includes(k1.key)).toBe(false);
    expect(data.includes(Buffer.from(AD))).toBe(false);
  });

  it('sealing the same value twice gives different envelopes: a fresh IV each time, the data key shared by values sealed in a row', () => {
    const a = sealer.seal(Buffer.from(SECRET), AD);
    const b = sealer.seal(Buffer.from(SECRET), AD);
    expect(a.data.equals(b.data)).toBe(false);
    // The wrapped data key (bytes 1..60) is shared; the value IV (61..72) is not.
    expect(a.data.subarray(1, 61).equals(b.data.subarray(1, 61))).toBe(true);
    expect(a.data.subarray(61, 73).equals(b.data.subarray(61, 73))).toBe(false);
  });

  it('a data key seals at most 1,024 values, then a new one is wrapped', () => {
    const own = new Sealer(new Keyring(k1));
    const headers = new Set<string>();
    for (let i = 0; i < 1_025; i++) headers.add(own.seal(Buffer.from('x'), AD).data.subarray(1, 61).toString('hex'));
    expect(headers.size).toBe(2);
  });

  it('[SEC-01] a shared data key does not unbind a value from its record: another associated data still fails', () => {
    const a = sealer.seal(Buffer.from(SECRET), `${AD}:a`);
    const b = sealer.seal(Buffer.from('other'), `${AD}:b`);
    expect(a.data.subarray(1, 61).equals(b.data.subarray(1, 61))).toBe(true);
    expect(() => sealer.open(a, `${AD}:b`)).toThrow(SealedRecordUnreadable);
    // Splicing one record's ciphertext onto the other's header fails too.
    const spliced = { keyId: a.keyId, data: Buffer.concat([b.data.subarray(0, 61), a.data.subarray(61)]) };
    expect(sealer.open(spliced, `${AD}:a`).toString()).toBe(SECRET);
    expect(() => sealer.open(spliced, `${AD}:b`)).toThrow(SealedRecordUnreadable);
  });

  it('a version 1 envelope (a data key per value, wrapped under the record) still opens', () => {
    const aad = Buffer.from(AD, 'utf8');
    const dek = randomBytes(32);
    const wrapIv = randomBytes(12);
    const wrap = createCipheriv('aes-256-gcm', k1.key, wrapIv);
    wrap.setAAD(aad);
    const wrappedDek = Buffer.concat([wrap.update(dek), wrap.final()]);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', dek, iv);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(Buffer.from(SECRET)), cipher.final()]);
    const data = Buffer.concat([Buffer.from([1]), wrapIv, wrappedDek, wrap.getAuthTag(), iv, cipher.getAuthTag(), ciphertext]);
    expect(sealer.open({ keyId: 'k1', data }, AD).toString()).toBe(SECRET);
    expect(() => sealer.open({ keyId: 'k1', data }, `${AD}:other`)).toThrow(SealedRecordUnreadable);
  });

  it('[SEC-01] flipping any single byte of the envelope fails with SealedRecordUnreadable', () => {
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    // Header (version, wrap IV, wrapped data key, wrap tag, IV, tag) plus every ciphertext byte.
    expect(envelope.data.length).toBe(1 + 12 + 32 + 16 + 12 + 16 + SECRET.length);
    for (let i = 0; i < envelope.data.length; i++) {
      expect(() => sealer.open(flipped(envelope, i), AD)).toThrow(SealedRecordUnreadable);
    }
    // The untouched envelope still opens (the loop worked on copies).
    expect(sealer.open(envelope, AD).toString()).toBe(SECRET);
  });

  it('a truncated or extended envelope fails', () => {
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    for (const length of [0, 1, 50, 89, envelope.data.length - 1]) {
      expect(() => sealer.open({ keyId: 'k1', data: envelope.data.subarray(0, length) }, AD)).toThrow(SealedRecordUnreadable);
    }
    expect(() => sealer.open({ keyId: 'k1', data: Buffer.concat([envelope.data, Buffer.from([0])]) }, AD)).toThrow(
      SealedRecordUnreadable,
    );
  });

  it('[SEC-01] other associated data fails: the envelope is bound to its record and purpose', () => {
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    for (const other of [AD.replace('test.purpose', 'other.purpose'), AD.replace('0193a2b4', '0193a2b5'), '', `${AD} `]) {
      expect(() => sealer.open(envelope, other)).toThrow(SealedRecordUnreadable);
    }
  });

  it('an unknown key ID fails, naming the key', () => {
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    expect(() => sealer.open({ ...envelope, keyId: 'k7' }, AD)).toThrow(SealedRecordUnreadable);
    expect(() => sealer.open({ ...envelope, keyId: 'k7' }, AD)).toThrow(/unknown key ID "k7"/);
  });

  it('an envelope under another key with the same key ID fails', () => {
    const impostor = new Sealer(new Keyring({ id: 'k1', key: randomBytes(32) }));
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    expect(() => impostor.open(envelope, AD)).toThrow(SealedRecordUnreadable);
  });

  it('the error never carries the plaintext or key material', () => {
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    try {
      sealer.open(flipped(envelope, envelope.data.length - 1), AD);
      throw new Error('unreachable');
    } catch (error) {
      expect(error).toBeInstanceOf(SealedRecordUnreadable);
      const text = `${(error as Error).message} ${String((error as Error).stack)}`;
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(k1.key.toString('base64'));
    }
  });
});

describe('Sealer key rotation', () => {
  const before = new Sealer(new Keyring(k1));
  const sealedUnderK1 = before.seal(Buffer.from(SECRET), AD);

  it('[SEC-01] a value sealed under k1 opens after the current key becomes k2 with k1 listed as old', () => {
    const after = new Sealer(new Keyring(k2, [k1]));
    expect(after.open(sealedUnderK1, AD).toString()).toBe(SECRET);
    // New values are sealed under the current key.
    expect(after.seal(Buffer.from('new'), AD).keyId).toBe('k2');
  });

  it('[SEC-01] a value sealed under k1 fails once k1 is no longer listed', () => {
    const after = new Sealer(new Keyring(k2));
    expect(() => after.open(sealedUnderK1, AD)).toThrow(SealedRecordUnreadable);
    expect(() => after.open(sealedUnderK1, AD)).toThrow(/unknown key ID "k1"/);
  });

  it('[SEC-01] reseal moves a k1 value to k2, after which k1 can be retired', () => {
    const rotating = new Sealer(new Keyring(k2, [k1]));
    const moved = rotating.reseal(sealedUnderK1, AD);
    expect(moved.keyId).toBe('k2');
    expect(moved.data.equals(sealedUnderK1.data)).toBe(false);
    const retired = new Sealer(new Keyring(k2));
    expect(retired.open(moved, AD).toString()).toBe(SECRET);
    // The moved envelope keeps its binding to the record.
    expect(() => retired.open(moved, `${AD}x`)).toThrow(SealedRecordUnreadable);
  });

  it('reseal is a no-op for a value already under the current key', () => {
    const current = new Sealer(new Keyring(k2, [k1]));
    const envelope = current.seal(Buffer.from(SECRET), AD);
    expect(current.reseal(envelope, AD)).toBe(envelope);
  });

  it('reseal refuses a tampered envelope instead of sealing garbage', () => {
    const rotating = new Sealer(new Keyring(k2, [k1]));
    expect(() => rotating.reseal(flipped(sealedUnderK1, 40), AD)).toThrow(SealedRecordUnreadable);
    expect(() => rotating.reseal(sealedUnderK1, 'other')).toThrow(SealedRecordUnreadable);
  });

  it('an old key listed with the same ID as the current one does not shadow the current key', () => {
    const stale: MasterKey = { id: 'k2', key: randomBytes(32) };
    const sealer = new Sealer(new Keyring(k2, [stale, k1]));
    const envelope = sealer.seal(Buffer.from(SECRET), AD);
    expect(sealer.open(envelope, AD).toString()).toBe(SECRET);
    expect(new Sealer(new Keyring(k2)).open(envelope, AD).toString()).toBe(SECRET);
  });
});
