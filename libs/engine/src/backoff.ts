/** 100 ms, 200 ms, 400 ms … capped at 5 s (ERR-04). */
export function backoffMs(attempt: number): number {
  return Math.min(5_000, 100 * 2 ** Math.max(0, attempt - 1));
}
