import type { Queryable } from '@openbot/engine';

/**
 * Holds (USE-02, USE-03): an attempt of a model call reserves its estimate while it runs
 * (billing/reservations.ts opens it, and releases the holds earlier attempts of the same call
 * left open — after a takeover those belong to an owner that is gone). Every way a call ends
 * releases its holds; an unknown usage record keeps what its attempt reserved instead.
 */
export const usageHolds = {
  /** Releases the open holds of one call (all its attempts), or of the whole execution. */
  async release(db: Queryable, executionId: string, callKey?: string): Promise<void> {
    await db.query({
      name: 'usage.release_holds',
      text: `UPDATE usage_holds SET released_at = now()
              WHERE execution_id = $1 AND ($2::text IS NULL OR call_key = $2) AND released_at IS NULL`,
      values: [executionId, callKey ?? null],
    });
  },
};
