/**
 * Why an MCP exchange failed, in categories a caller can act on. `category` is the public error
 * category of domain failures (libs/domain `ErrorCategory`) the failure maps to; `reason` is the
 * finer protocol reason. The server's own error text is kept only as the `cause`, never in the
 * message: it may carry anything the server chose to say (ERR-01).
 */
export type McpFailureReason =
  /** The server could not be reached, or it answered 5xx / 429. */
  | 'unreachable'
  /** The request may have reached the server and its answer was lost (a dropped stream, a timeout). */
  | 'answer_lost'
  /** The server needs authorization (401, or 403 without a usable grant). */
  | 'needs_authorization'
  /** The server spoke something that is not MCP, or an answer over the byte cap. */
  | 'invalid_server'
  /** A JSON-RPC error answer to a request (method not found, invalid params, ...). */
  | 'protocol_error'
  /** The tool a saved declaration names is gone or changed on the server (STC-12). */
  | 'tool_changed'
  /** The egress policy refused the URL before anything was sent. */
  | 'refused'
  /** A legacy server answered 404 for the session: it did nothing, and a new session may be opened. */
  | 'session_lost';

const CATEGORY: Record<McpFailureReason, 'unavailable' | 'timeout' | 'forbidden' | 'internal'> = {
  unreachable: 'unavailable',
  answer_lost: 'timeout',
  needs_authorization: 'forbidden',
  invalid_server: 'unavailable',
  protocol_error: 'unavailable',
  tool_changed: 'unavailable',
  refused: 'forbidden',
  session_lost: 'unavailable',
};

export class McpFailure extends Error {
  override readonly name = 'McpFailure';
  readonly category: 'unavailable' | 'timeout' | 'forbidden' | 'internal';
  /** Whether a repeat of the same request could succeed (the answer never arrived, or the server was down). */
  readonly retryable: boolean;
  /** The engine's call log reads these: a lost answer of an unsafe call waits in outcome_unknown (CALL-03). */
  readonly resultLost: boolean;
  readonly safeToRetry: boolean;
  constructor(
    readonly reason: McpFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.category = CATEGORY[reason];
    this.retryable = reason === 'unreachable' || reason === 'answer_lost' || reason === 'session_lost';
    this.resultLost = reason === 'answer_lost';
    this.safeToRetry = this.retryable;
  }
}

/** Whether a thrown value is (or wraps) an McpFailure. */
export function isMcpFailure(error: unknown): error is McpFailure {
  return error instanceof McpFailure;
}
