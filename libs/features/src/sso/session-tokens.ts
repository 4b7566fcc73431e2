import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A session lasts 8 hours from sign-in, whatever happens in between (no sliding renewal). */
export const SESSION_LIFETIME_SECONDS = 8 * 60 * 60;

/** A login in flight is refused after 10 minutes. */
export const LOGIN_LIFETIME_SECONDS = 10 * 60;

/** 32 random bytes, base64url: session tokens, CSRF tokens, states, browser bindings, PKCE verifiers. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What a random token looks like; anything else is refused before any database read. */
export function isWellFormedToken(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** 256 bits of entropy make a plain SHA-256 a sufficient stored form (no stretching needed). */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time comparison of two tokens of any length. */
export function tokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashToken(a), hashToken(b));
}

/** Constant-time comparison of a presented token with a stored hash. */
export function tokenMatches(token: string, storedHash: Buffer): boolean {
  const presented = hashToken(token);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}

/** The PKCE S256 challenge of a verifier (RFC 7636 §4.2). */
export function codeChallengeOf(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
