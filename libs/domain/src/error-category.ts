/**
 * The only failure detail that leaves the server besides an error ID (ERR-01, ERR-02), and, for a
 * failure an outside service answered, its scrubbed detail (decision 082).
 * `forbidden`: the work's identity is no longer valid (a revoked key, a removed member, IDN-06).
 * `invalid-request`, `context-too-long`, `rate-limited`: a model provider refused the call for
 * that reason (with `unavailable` and `timeout`, the categories of a model failure).
 */
export const ERROR_CATEGORIES = ['internal', 'unavailable', 'timeout', 'forbidden', 'invalid-request', 'context-too-long', 'rate-limited'] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];
