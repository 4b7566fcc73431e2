/**
 * The only failure detail that leaves the server besides an error ID (ERR-01, ERR-02).
 * `forbidden`: the work's identity is no longer valid (a revoked key, a removed member, IDN-06).
 */
export const ERROR_CATEGORIES = ['internal', 'unavailable', 'timeout', 'forbidden'] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];
