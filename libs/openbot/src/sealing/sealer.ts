import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
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

const VERSION = 1;
const IV = 12;
const TAG = 16;
const DEK = 32;
const HEADER = 1 + IV + DEK + TAG + IV + TAG;

/**
 * AES-256-GCM envelope encryption (SEC-01). Each value gets a fresh data key; the master key
 * only wraps that data key, so rotating the master key means re-wrapping 60 bytes, and old
 * records stay readable through the retired keys listed in OPENBOT_MASTER_KEYS_OLD.
 * The associated data binds an envelope to its record (ID and purpose): moving ciphertext
 * from one row to another fails authentication.
 *
 * Layout: version | wrapIv | wrappedDek | wrapTag | iv | tag | ciphertext
 */
export class Sealer {
  constructor(private readonly keyring: Keyring) {}

  seal(plaintext: Buffer, associatedData: string): Envelope {
    const aad = Buffer.from(associatedData, 'utf8');
    const dek = randomBytes(DEK);
    const wrapIv = randomBytes(IV);
    const wrap = createCipheriv('aes-256-gcm', this.keyring.current.key, wrapIv);
    wrap.setAAD(aad);
    const wrappedDek = Buffer.concat([wrap.update(dek), wrap.final()]);
    const iv = randomBytes(IV);
    const cipher = createCipheriv('aes-256-gcm', dek, iv);
    cipher.setAAD(aad);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const data = Buffer.concat([
      Buffer.from([VERSION]),
      wrapIv,
      wrappedDek,
      wrap.getAuthTag(),
      iv,
      cipher.getAuthTag(),
      ciphertext,
    ]);
    return { keyId: this.keyring.current.id, data };
  }

  open(envelope: Envelope, associatedData: string): Buffer {
    const { data } = envelope;
    if (data.length < HEADER || data[0] !== VERSION) throw new SealedRecordUnreadable('unknown envelope format');
    const key = this.keyring.find(envelope.keyId);
    if (key === undefined) throw new SealedRecordUnreadable(`unknown key ID "${envelope.keyId}"`);
    const aad = Buffer.from(associatedData, 'utf8');
    let at = 1;
    const take = (n: number): Buffer => data.subarray(at, (at += n));
    const wrapIv = take(IV);
    const wrappedDek = take(DEK);
    const wrapTag = take(TAG);
    const iv = take(IV);
    const tag = take(TAG);
    const ciphertext = data.subarray(at);
    try {
      const unwrap = createDecipheriv('aes-256-gcm', key, wrapIv);
      unwrap.setAAD(aad);
      unwrap.setAuthTag(wrapTag);
      const dek = Buffer.concat([unwrap.update(wrappedDek), unwrap.final()]);
      const decipher = createDecipheriv('aes-256-gcm', dek, iv);
      decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch {
      throw new SealedRecordUnreadable('authentication failed');
    }
  }

  /** Seals the value again under the current master key (key rotation); a no-op when already current. */
  reseal(envelope: Envelope, associatedData: string): Envelope {
    if (envelope.keyId === this.keyring.current.id) return envelope;
    return this.seal(this.open(envelope, associatedData), associatedData);
  }
}
