/**
 * Why an OAuth exchange with an App's authorization server failed, in reasons a caller can act
 * on. The server's own text (an `error_description`, a body) is kept only as the `cause`, never
 * in the message: it may carry anything the server chose to say (ERR-01).
 */
export type OAuthFailureReason =
  /** The MCP server answered without asking for authorization: there is nothing to authorize. */
  | 'not_required'
  /** Protected-resource or authorization-server metadata could not be found or read. */
  | 'discovery_failed'
  /** The protected-resource metadata names another resource than the server it was read for (RFC 9728 §3.3). */
  | 'resource_mismatch'
  /** The authorization-server metadata, or an authorization response, names another issuer (RFC 8414 §3.3, RFC 9207). */
  | 'issuer_mismatch'
  /** The authorization server does not advertise PKCE with S256: OpenBot refuses to authorize there. */
  | 'pkce_unsupported'
  /** No client could be registered: no pre-registered client, and dynamic registration is missing or refused. */
  | 'registration_failed'
  /** The grant (code or refresh token) is invalid, expired, used or revoked (`invalid_grant`). */
  | 'invalid_grant'
  /** Another OAuth error answer (invalid_client, invalid_request, unauthorized_client, access_denied, ...). */
  | 'rejected'
  /** The server could not be reached, or it answered 5xx: nothing was granted. */
  | 'unreachable'
  /** The request may have reached the server and its answer was lost. */
  | 'answer_lost'
  /** The egress policy refused the URL before anything was sent. */
  | 'refused';

const CATEGORY: Record<OAuthFailureReason, 'unavailable' | 'timeout' | 'forbidden' | 'invalid-input'> = {
  not_required: 'invalid-input',
  discovery_failed: 'unavailable',
  resource_mismatch: 'forbidden',
  issuer_mismatch: 'forbidden',
  pkce_unsupported: 'forbidden',
  registration_failed: 'unavailable',
  invalid_grant: 'forbidden',
  rejected: 'forbidden',
  unreachable: 'unavailable',
  answer_lost: 'timeout',
  refused: 'forbidden',
};

export class OAuthFailure extends Error {
  override readonly name = 'OAuthFailure';
  readonly category: 'unavailable' | 'timeout' | 'forbidden' | 'invalid-input';
  /** The engine's call log reads these: a lost answer of an unsafe call waits in outcome_unknown (CALL-03). */
  readonly resultLost: boolean;
  readonly safeToRetry: boolean;
  /** Refused before anything left the process (the call log marks the attempt failed without an error record). */
  readonly notSent: boolean;
  /** The OAuth `error` code of the server's answer, when it gave one (`invalid_grant`, `invalid_client`, ...). */
  readonly oauthError: string | null;
  constructor(
    readonly reason: OAuthFailureReason,
    message: string,
    options?: { cause?: unknown; readonly oauthError?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.category = CATEGORY[reason];
    this.resultLost = reason === 'answer_lost';
    this.safeToRetry = reason === 'unreachable';
    this.notSent = reason === 'refused';
    this.oauthError = options?.oauthError ?? null;
  }
}

export function isOAuthFailure(error: unknown): error is OAuthFailure {
  return error instanceof OAuthFailure;
}

/** Connection errors that prove the request never reached the server. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Maps what the SDK's OAuth helpers (or the fetch under them) threw to an OAuthFailure.
 * `sent`: a request that changes state at the server (a code exchange, a refresh, a
 * registration) whose connection broke after it was sent counts as `answer_lost`.
 */
export function toOAuthFailure(error: unknown, during: 'discovery' | 'registration' | 'token' | 'revocation'): OAuthFailure {
  if (error instanceof OAuthFailure) return error;
  const named = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; status?: unknown };
  const name = typeof named?.name === 'string' ? named.name : '';
  if (name === 'EgressRefused') return new OAuthFailure('refused', 'the egress policy refused the authorization server', { cause: error });
  if (name === 'IssuerMismatchError') return new OAuthFailure('issuer_mismatch', 'the authorization server answered for another issuer', { cause: error });
  if (name === 'RegistrationRejectedError') return new OAuthFailure('registration_failed', 'the authorization server refused the client registration', { cause: error });
  if (name === 'InsecureTokenEndpointError') return new OAuthFailure('refused', 'the token endpoint is not https', { cause: error });
  if (typeof named?.code === 'string' && error instanceof Error && name !== 'TypeError' && /^[a-z_]+$/.test(named.code)) {
    const code = named.code;
    if (code === 'invalid_grant') return new OAuthFailure('invalid_grant', 'the authorization server refused the grant (invalid_grant)', { cause: error, oauthError: code });
    if (code === 'server_error' || code === 'temporarily_unavailable') return new OAuthFailure('unreachable', `the authorization server failed (${code})`, { cause: error, oauthError: code });
    return new OAuthFailure('rejected', `the authorization server refused the request (${code})`, { cause: error, oauthError: code });
  }
  if (name === 'TypeError' || name === 'AbortError' || name === 'TimeoutError') {
    const cause = named.cause as { code?: unknown } | undefined;
    const notConnected = typeof cause?.code === 'string' && NOT_CONNECTED.has(cause.code);
    if (notConnected || during === 'discovery') return new OAuthFailure('unreachable', 'the authorization server could not be reached', { cause: error });
    return new OAuthFailure('answer_lost', 'the authorization server’s answer was lost', { cause: error });
  }
  if (during === 'discovery') return new OAuthFailure('discovery_failed', 'the authorization metadata could not be read', { cause: error });
  if (during === 'registration') return new OAuthFailure('registration_failed', 'the client could not be registered', { cause: error });
  return new OAuthFailure('rejected', 'the authorization server gave an answer OpenBot cannot use', { cause: error });
}
