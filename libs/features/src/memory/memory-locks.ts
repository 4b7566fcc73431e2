import type { Queryable } from '@openbot/engine';

/** The advisory lock namespace of Bot memory ("mem0"): the first of the two int4 keys. */
export const MEMORY_LOCK_NAMESPACE = 0x6d656d30;

/**
 * Per-Bot memory locks (MEM-02), held for the transaction they are taken in: reads share one,
 * changes take it alone, so a read sees tags, rules, sources and content of one state. Nothing
 * slow (no model call, no outside call) may run while one is held.
 */
export const memoryLocks = {
  async shared(tx: Queryable, botId: string): Promise<void> {
    await tx.query({ name: 'memory.lock_shared', text: 'SELECT pg_advisory_xact_lock_shared($1::int4, hashtext($2))', values: [MEMORY_LOCK_NAMESPACE, botId] });
  },
  async exclusive(tx: Queryable, botId: string): Promise<void> {
    await tx.query({ name: 'memory.lock_exclusive', text: 'SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', values: [MEMORY_LOCK_NAMESPACE, botId] });
  },
};
