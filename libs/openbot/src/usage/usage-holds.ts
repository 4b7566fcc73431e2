import { newId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';

/**
 * Holds (USE-02, USE-03): an attempt of a model call reserves its estimate while it runs. Opening
 * the hold of attempt N releases the holds earlier attempts of the same call left open — after a
 * takeover those belong to an owner that is gone. Every way a call ends releases its holds.
 */
export const usageHolds = {
  async open(db: Queryable, hold: { organizationId: string; executionId: string; callKey: string; attempt: number; estimatedInputTokens: number }): Promise<void> {
    await db.query({
      name: 'usage.open_hold',
      text: `WITH earlier AS (
               UPDATE usage_holds SET released_at = now()
                WHERE execution_id = $3 AND call_key = $4 AND attempt < $5 AND released_at IS NULL
             )
             INSERT INTO usage_holds (id, organization_id, execution_id, call_key, attempt, estimated_input_tokens)
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (execution_id, call_key, attempt) DO NOTHING`,
      values: [newId(), hold.organizationId, hold.executionId, hold.callKey, hold.attempt, hold.estimatedInputTokens],
    });
  },

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
