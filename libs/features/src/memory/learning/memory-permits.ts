import type { Queryable } from '@openbot/engine';

/**
 * Shared helper-call permits in PostgreSQL (LIM-01): at most `cap` memory helper calls hold one
 * at a time across all nodes. A permit is one numbered slot row held by an execution, not by a
 * node or a process: a takeover finds its execution's permit and keeps it (taking is idempotent),
 * so a new owner never resets the shared limit. The execution checks it still holds its permit
 * right before it sends, and gives it back in its end transaction however it ends.
 */
export const memoryPermits = {
  /** The execution's slot, taken now or held already; null when all `cap` slots are held by others. */
  async take(db: Queryable, executionId: string, cap: number): Promise<number | null> {
    const held = await this.slotOf(db, executionId);
    if (held !== null) return held;
    // Two takers may choose the same free slot: the primary key lets one win; the other looks again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const { rows } = await db.query<{ slot: number }>({
        name: 'memory.permit_take',
        text: `INSERT INTO memory_permits (slot, execution_id)
               SELECT s.slot, $1 FROM generate_series(1, $2::int) AS s(slot)
                WHERE NOT EXISTS (SELECT 1 FROM memory_permits p WHERE p.slot = s.slot)
                ORDER BY s.slot LIMIT 1
               ON CONFLICT DO NOTHING
               RETURNING slot`,
        values: [executionId, cap],
      });
      if (rows[0] !== undefined) return rows[0].slot;
      const again = await this.slotOf(db, executionId);
      if (again !== null) return again;
      const { rows: live } = await db.query<{ n: number }>({ name: 'memory.permit_count', text: 'SELECT count(*)::int AS n FROM memory_permits WHERE slot <= $1', values: [cap] });
      if (live[0]!.n >= cap) return null;
    }
    return null;
  },

  async slotOf(db: Queryable, executionId: string): Promise<number | null> {
    const { rows } = await db.query<{ slot: number }>({ name: 'memory.permit_of', text: 'SELECT slot FROM memory_permits WHERE execution_id = $1', values: [executionId] });
    return rows[0]?.slot ?? null;
  },

  /** Gives the execution's permit back ($1: the execution); run in its end transaction. */
  releaseStatement: 'DELETE FROM memory_permits WHERE execution_id = $1',
};
