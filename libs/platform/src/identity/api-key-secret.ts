import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyId } from '@openbot/domain';
import { isUuid } from '@openbot/domain';

const PREFIX = 'obk_';

/**
 * A secret is `obk_<key id without dashes>_<32 random bytes, base64url>`: the ID finds the row
 * with one indexed read, the random part is what proves possession. 256 bits of entropy make a
 * plain SHA-256 a sufficient stored form (no password stretching needed).
 */
export function generateSecret(id: ApiKeyId): string {
  return `${PREFIX}${id.replaceAll('-', '')}_${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The key ID inside a well-formed secret, or null. */
export function keyIdOf(secret: string): ApiKeyId | null {
  const match = /^obk_([0-9a-f]{32})_[A-Za-z0-9_-]{43}$/.exec(secret);
  if (!match) return null;
  const hex = match[1]!;
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return isUuid(id) ? (id as ApiKeyId) : null;
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const presented = hashSecret(secret);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}

/** Constant-time comparison of two tokens of any length (the admin token). */
export function tokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashSecret(a), hashSecret(b));
}
