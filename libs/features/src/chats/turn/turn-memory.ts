import { systemMessage, type ChatMessage } from '@openbot/core';
import { isMemberRole } from '@openbot/domain';
import type { Sql } from '../../../../platform/src/database/sql';
import type { MemoryStore } from '../../memory/memory-store';
import type { MemoryReader } from '../../memory/memory-view';
import type { TurnMemory, TurnState } from '../../../../platform/src/turn-core/turn-state';

/** What a Turn needs to select context from its Bot's memory. */
export interface TurnMemoryDeps {
  readonly store: MemoryStore;
  /** OPENBOT_MEMORY_CONTEXT_TOKENS. */
  readonly budgetTokens: number;
}

/**
 * The Turn asks memory for its context (MEM-03: memory selects, the Turn never reads the pool):
 * the reader is the Turn's member with the role it has now (a removed member reads as no one,
 * so only `bot` items), and the text is the Turn's input.
 */
export async function selectTurnMemory(db: Sql, deps: TurnMemoryDeps, state: TurnState, text: string): Promise<TurnMemory> {
  const reader = await readerOf(db, state);
  const selection = await deps.store.select({ organizationId: state.organizationId, botId: state.bot!.id, reader, text, budgetTokens: deps.budgetTokens });
  return { ids: [...selection.ids], contents: [...selection.contents] };
}

async function readerOf(db: Sql, state: TurnState): Promise<MemoryReader> {
  if (state.scope.kind !== 'member') return { kind: 'service' };
  const member = await db.one<{ role: string }>({
    name: 'turn.memory_reader',
    text: 'SELECT role FROM members WHERE id = $1 AND organization_id = $2',
    values: [state.scope.id, state.organizationId],
  });
  const role = member?.role;
  return role !== undefined && isMemberRole(role) ? { kind: 'member', memberId: state.scope.id, role } : { kind: 'service' };
}

/** The selected memories as one system message after the instructions; none when nothing was selected. */
export function memoryMessages(memory: TurnMemory | undefined): ChatMessage[] {
  if (memory === undefined || memory.contents.length === 0) return [];
  return [systemMessage(`What you remember from earlier conversations:\n${memory.contents.map((c) => `- ${c}`).join('\n')}`)];
}
