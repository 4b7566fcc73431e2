/** The only failure detail that leaves the server besides an error ID (ERR-01, ERR-02). */
export const ERROR_CATEGORIES = ['internal', 'unavailable', 'timeout'] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];
