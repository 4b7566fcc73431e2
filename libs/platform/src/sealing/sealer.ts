import { createCipheriv, createDecipheriv, randomBytes, randomFillSync } from 'node:crypto';
import { Keyring } from './keyring';

/** The stored form of a sealed value: ciphertext and the ID of the key that wraps its data key. */
export interface Envelope {
  readonly keyId: string;
  readonly data: Buffer;
}

/** A sealed value that cannot be opened: unknown key, tampered bytes, or another record's envelope. */
export class SealedRecordUnreadable extends Error {
  constructor(reason: string) {
    super(`Sealed record cannot be opened: ${reason}`);
  }
}

/** v1: a data key per value, wrapped under the record's associated data. */
const V1 = 1;
/** v2: a data key shared by a few values in a row, wrapped under WRAP_AAD; each value still binds its own record. */
const V2 = 2;
const IV = 12;
const TAG = 16;
const DEK = 32;
const WRAP = IV + DEK + TAG;
const HEADER = 1 + WRAP + IV + TAG;
const WRAP_AAD = Buffer.from('openbot.sealer.data-key.v2', 'utf8');
/** A data key seals at most this many values, for at most this long (far below AES-GCM's random-IV bound). */
const DEK_USES = 1_024;
const DEK_TTL_MS = 60_000;
/** Unwrapped v2 data keys kept for opening; a miss only costs one unwrap. */
const OPENED_DEKS = 256;

interface DataKey {
  readonly keyId: string;
  readonly master: Buffer;
  readonly dek: Buffer;
  /** wrapIv | wrappedDek | wrapTag, as stored in every envelope it seals. */
  readonly wrapped: Buffer;
  readonly until: number;
  uses: number;
}

/**
 * AES-256-GCM envelope encryption (SEC-01). The master key only wraps data keys, so rotating
 * it means re-wrapping 60 bytes, and old records stay readable through the retired keys listed in
 * OPENBOT_MASTER_KEYS_OLD. The associated data binds every value to its record (ID and purpose):
 * moving ciphertext from one row to another fails authentication.
 *
 * A data key is shared by up to 1,024 values sealed within a minute (v2, like a KMS data-key
 * cache): sealing a stream of events costs one AES-GCM pass per value instead of two, and
 * readers unwrap each data key once. Each value still gets its own random IV and tag. v1
 * envelopes (one data key per value) keep opening.
 *
 * Layout: version | wrapIv | wrappedDek | wrapTag | iv | tag | ciphertext
 */
export class Sealer {
  private dataKey: DataKey | null = null;
  private readonly opened = new Map<string, Buffer>();
  /** Random bytes for value IVs, drawn from the CSPRNG a few KiB at a time (one call per ~340 seals, not one per seal). */
  private ivPool = Buffer.alloc(0);
  private ivOffset = 0;

  constructor(private readonly keyring: Keyring) {}

  seal(plaintext: Buffer, associatedData: string): Envelope {
    const aad = Buffer.from(associatedData, 'utf8');
    const dataKey = this.currentDataKey();
    dataKey.uses += 1;
    const iv = this.nextIv();
    const cipher = createCipheriv('aes-256-gcm', dataKey.dek, iv);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const data = Buffer.concat([Buffer.from([V2]), dataKey.wrapped, iv, cipher.getAuthTag(), ciphertext]);
    return { keyId: dataKey.keyId, data };
  }

  /** A fresh random IV: each slice of the pool is used once. */
  private nextIv(): Buffer {
    if (this.ivOffset + IV > this.ivPool.length) {
      this.ivPool = randomFillSync(Buffer.allocUnsafe(IV * 341));
      this.ivOffset = 0;
    }
    const iv = this.ivPool.subarray(this.ivOffset, this.ivOffset + IV);
    this.ivOffset += IV;
    return iv;
  }

  open(envelope: Envelope, associatedData: string): Buffer {
    const { data } = envelope;
    if (data.length < HEADER || (data[0] !== V1 && data[0] !== V2)) throw new SealedRecordUnreadable('unknown envelope format');
    const key = this.keyring.find(envelope.keyId);
    if (key === undefined) throw new SealedRecordUnreadable(`unknown key ID "${envelope.keyId}"`);
    const aad = Buffer.from(associatedData, 'utf8');
    const wrapped = data.subarray(1, 1 + WRAP);
    const iv = data.subarray(1 + WRAP, 1 + WRAP + IV);
    const tag = data.subarray(1 + WRAP + IV, HEADER);
    const ciphertext = data.subarray(HEADER);
    try {
      const dek = data[0] === V1 ? unwrap(key, wrapped, aad) : this.openDataKey(envelope.keyId, key, wrapped);
      const decipher = createDecipheriv('aes-256-gcm', dek, iv);
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      throw new SealedRecordUnreadable('authentication failed');
    }
  }

  private currentDataKey(): DataKey {
    const current = this.keyring.current;
    const existing = this.dataKey;
    if (existing !== null && existing.keyId === current.id && existing.master === current.key && existing.uses < DEK_USES && Date.now() < existing.until) {
      return existing;
    }
    const dek = randomBytes(DEK);
    const wrapIv = randomBytes(IV);
    const wrap = createCipheriv('aes-256-gcm', current.key, wrapIv);
    wrap.setAAD(WRAP_AAD);
    const wrapped = Buffer.concat([wrapIv, wrap.update(dek), wrap.final(), wrap.getAuthTag()]);
    this.dataKey = { keyId: current.id, master: current.key, dek, wrapped, until: Date.now() + DEK_TTL_MS, uses: 0 };
    return this.dataKey;
  }

  private openDataKey(keyId: string, master: Buffer, wrapped: Buffer): Buffer {
    const cacheKey = `${keyId}:${wrapped.toString('base64')}`;
    const cached = this.opened.get(cacheKey);
    if (cached !== undefined) return cached;
    const dek = unwrap(master, wrapped, WRAP_AAD);
    if (this.opened.size >= OPENED_DEKS) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(cacheKey, dek);
    return dek;
  }

  /** Seals the value again under the current master key (key rotation); a no-op when already current. */
  reseal(envelope: Envelope, associatedData: string): Envelope {
    if (envelope.keyId === this.keyring.current.id) return envelope;
    return this.seal(this.open(envelope, associatedData), associatedData);
  }
}

/** Unwraps a data key (wrapIv | wrappedDek | wrapTag) with the master key and the wrap's associated data. */
function unwrap(master: Buffer, wrapped: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', master, wrapped.subarray(0, IV));
  decipher.setAAD(aad);
  decipher.setAuthTag(wrapped.subarray(IV + DEK));
  return Buffer.concat([decipher.update(wrapped.subarray(IV, IV + DEK)), decipher.final()]);
}
