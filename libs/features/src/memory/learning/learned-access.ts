import type { Queryable } from '@openbot/engine';
import type { MemoryAccess, MemoryLearnAccess } from '../memory-view';

/** What the learner knows of the Turn it learns from. */
export interface LearningTurn {
  readonly botId: string;
  readonly organizationId: string;
  readonly turnId: string;
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string };
  /** The Bot's `memory.learnAccess` when the Turn ran. */
  readonly learnAccess: MemoryLearnAccess;
  /** The items the Turn's memory selected for it (`memory.read`). */
  readonly read: readonly string[];
}

/**
 * The access rule of what the learner stores from a batch of messages (MEM-01): the Turn's
 * member alone (`members: [member]`), unless the Bot asks for `bot`. Even then it stays the
 * member's whenever the batch could carry something narrower than the whole Bot: messages of
 * another Turn (whose selection this learner does not know), or an item the Turn selected that is
 * not (or no longer) a `bot` item of this Bot. So the learner never republishes what only some
 * members could read. Null: nobody to store it for (a service's Turn without `bot`), learn nothing.
 * Run in the learner's write transaction, under the Bot's exclusive memory lock.
 */
export async function learnedAccess(tx: Queryable, turn: LearningTurn, batchTurnIds: readonly string[]): Promise<MemoryAccess | null> {
  const own: MemoryAccess | null = turn.scope.kind === 'member' ? { kind: 'members', ids: [turn.scope.id] } : null;
  if (turn.learnAccess !== 'bot') return own;
  if (batchTurnIds.some((id) => id !== turn.turnId)) return own;
  if (turn.read.length === 0) return { kind: 'bot' };
  const { rows } = await tx.query<{ n: number }>({
    name: 'memory.learn_read_bot_items',
    text: `SELECT count(*)::int AS n FROM memory_items WHERE id = ANY($1::uuid[]) AND bot_id = $2 AND organization_id = $3 AND access->>'kind' = 'bot'`,
    values: [[...new Set(turn.read)], turn.botId, turn.organizationId],
  });
  return rows[0]!.n === new Set(turn.read).size ? { kind: 'bot' } : own;
}
