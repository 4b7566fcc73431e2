import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { tokensEqual } from './session-tokens';

/** What an ID token must say to sign a member in (OpenID Connect Core §3.1.3.7). */
export interface ExpectedIdToken {
  readonly issuer: string;
  /** The audience: our client ID at the provider. */
  readonly clientId: string;
  /** The nonce stored with the login in flight. */
  readonly nonce: string;
}

/** The claims sign-in uses, from a verified ID token. */
export interface VerifiedIdToken {
  readonly subject: string;
  readonly email: string | null;
  /** `email_verified` as the provider stated it; absent counts as not verified. */
  readonly emailVerified: boolean;
  readonly name: string | null;
}

/** The ID token was not issued for this login: bad signature, issuer, audience, expiry or nonce. */
export class IdTokenRejected extends Error {
  override readonly name = 'IdTokenRejected';
}

/**
 * Signatures a provider's JWKS can carry. Symmetric (HS*) tokens would be keyed by our client
 * secret, which a JWKS never holds, and `none` is never accepted.
 */
const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Clock skew tolerated between us and the provider on `exp`, `iat` and `nbf`. */
const CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Verifies an ID token against the provider's keys: the signature (asymmetric algorithms only),
 * the issuer, our client ID as audience (and as `azp` when there are several audiences), the
 * expiry and the nonce of the login in flight. passport-openidconnect reads the token without
 * checking its signature, so this is the check that makes a login trustworthy.
 *
 * Pure apart from the key lookup: pass `createLocalJWKSet` for no I/O, `createRemoteJWKSet` in
 * the server. `now` is injectable for tests.
 */
export async function verifyIdToken(idToken: string, expected: ExpectedIdToken, keys: JWTVerifyGetKey, now?: Date): Promise<VerifiedIdToken> {
  let payload;
  try {
    ({ payload } = await jwtVerify(idToken, keys, {
      issuer: expected.issuer,
      audience: expected.clientId,
      algorithms: ASYMMETRIC_ALGORITHMS,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
    }));
  } catch (error) {
    // The provider's key set could not be fetched or read: the provider is at fault, not the token.
    if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) throw error;
    if (error instanceof errors.JOSEError) throw new IdTokenRejected(`ID token refused: ${describe(error)}`, { cause: error });
    throw error;
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (audiences.length > 1 && payload.azp !== expected.clientId) {
    throw new IdTokenRejected('ID token refused: several audiences and "azp" is not our client ID');
  }
  if (payload.azp !== undefined && payload.azp !== expected.clientId) throw new IdTokenRejected('ID token refused: "azp" is not our client ID');
  if (typeof payload.nonce !== 'string' || !tokensEqual(payload.nonce, expected.nonce)) {
    throw new IdTokenRejected('ID token refused: its nonce is not the one of this login');
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') throw new IdTokenRejected('ID token refused: no subject');
  return {
    subject: payload.sub,
    email: typeof payload.email === 'string' ? payload.email : null,
    emailVerified: isTrue(payload.email_verified),
    name: typeof payload.name === 'string' ? payload.name : null,
  };
}

/** Some providers send `email_verified` as the string "true". */
export function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}

function describe(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim "${error.claim}" ${error.reason === 'check_failed' ? 'does not match' : 'is missing'}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the provider matches its signature';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its signing algorithm is not allowed';
  return error.code;
}
