/** Where a growing delay starts and where it stops growing. */
export interface BackoffSteps {
  readonly firstMs: number;
  readonly capMs: number;
}

/** Retries of a phase, a call or a storage write (ERR-04): 100 ms, 200 ms, 400 ms … capped at 5 s. */
export const RETRY_BACKOFF: BackoffSteps = { firstMs: 100, capMs: 5_000 };

/** The delay before `attempt` (1, 2, …): doubling from `firstMs`, never more than `capMs`. */
export function backoffMs(attempt: number, steps: BackoffSteps = RETRY_BACKOFF): number {
  return Math.min(steps.capMs, steps.firstMs * 2 ** Math.max(0, attempt - 1));
}
