import { createHash } from 'node:crypto';
import { codec, defineWorkflow, type Codec } from '@openbot/engine';
import type { Sql } from '../../../../platform/src/database/sql';
import { BudgetStop, RateLimitWait, type ModelCalls } from '../../../../platform/src/models/model-calls';
import { modelStepResultCodec } from '../../../../platform/src/models/model-step-codec';
import { normalizedContent } from '../equal-content';
import type { MemoryStore } from '../memory-store';
import { MEMORY_LEARN_ACCESS, type MemoryLearnAccess } from '../memory-view';
import { learnedAccess } from './learned-access';
import { learningPrompt, parseLearned } from './learning-prompt';
import { memoryCursors } from './memory-cursors';
import { memoryPermits } from './memory-permits';

/** What a Turn's end submits: the Turn to learn from, and the Bot's model as the Turn saw it. */
export interface MemoryLearnInput {
  readonly organizationId: string;
  readonly botId: string;
  readonly chatId: string;
  readonly turnId: string;
  readonly model: string;
  /** The Turn's identity: the learning call is billed to it (USE-01), and what it learns is stored for it. */
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string };
  /** The Bot's `memory.learnAccess` when the Turn ran; absent on learners submitted before it existed: `member`. */
  readonly learnAccess?: MemoryLearnAccess;
  /** The items the Turn's memory selected (`memory.read`); absent: none known. */
  readonly read?: readonly string[];
}

export interface MemoryLearnState extends MemoryLearnInput {
  /** The execution holds a shared helper permit (LIM-01). */
  readonly permit: boolean;
  readonly done: boolean;
  /** The items this execution added. */
  readonly learned: readonly string[];
  /** Items the model answered that equal an active item with the same access rule (decision 086): not stored again. Absent on older states: 0. */
  readonly duplicates?: number;
  /** Why a model answer could not be read (a fixed phrase, never the answer), the first such; absent or null: every answer was read. */
  readonly unreadable?: string | null;
}

/** How long a learner without a free permit waits before it asks again (a durable timer). */
export const PERMIT_WAIT_MS = 1_000;
/** Messages one learning step reads at most. */
const MESSAGES_PER_STEP = 200;

const inputFields = {
  organizationId: codec.string,
  botId: codec.string,
  chatId: codec.string,
  turnId: codec.string,
  model: codec.string,
  scope: codec.object({ kind: codec.oneOf(['member', 'service']), id: codec.string }),
  learnAccess: codec.optional(codec.oneOf(MEMORY_LEARN_ACCESS)),
  read: codec.optional(codec.array(codec.string)),
};

export const MEMORY_LEARN = defineWorkflow({
  name: 'memory.learn',
  // Member work: it acts for the Turn's member and is billed to them (IDN-11).
  audience: 'member',
  input: codec.object(inputFields) satisfies Codec<MemoryLearnInput>,
  state: codec.object({
    ...inputFields,
    permit: codec.boolean,
    done: codec.boolean,
    learned: codec.array(codec.string),
    duplicates: codec.optional(codec.number),
    unreadable: codec.optional(codec.nullable(codec.string)),
  }) satisfies Codec<MemoryLearnState>,
  result: codec.object({
    learned: codec.array(codec.string),
    duplicates: codec.optional(codec.number),
    unreadable: codec.optional(codec.boolean),
    reason: codec.optional(codec.nullable(codec.string)),
  }),
  calls: { model: modelStepResultCodec },
});

export interface MemoryLearnDeps {
  readonly db: Sql;
  readonly models: ModelCalls;
  readonly memory: MemoryStore;
  /** OPENBOT_MEMORY_HELPER_PERMITS. */
  readonly permits: number;
}

/**
 * Learning after a Turn (decision 030): an execution of its own, submitted in the Turn's end
 * transaction. It takes a shared helper permit first (LIM-01), reads the Chat's messages after
 * the learning cursor, asks the Bot's model through ModelCalls, the one model-call path with the
 * call log, billing and rate limits (FW-03, PLAT-06), with no memory lock held (MEM-02), then
 * adds the items and moves the cursor forward in one transaction under the exclusive lock. Item
 * IDs derive from the execution, so a replayed step adds nothing twice; an item equal to an active
 * one of the Bot with the same access rule is not added again (decision 086). The permit goes
 * back in the end transaction, whatever the outcome. Its `execution.ended` (and result) says how
 * many items it learned, how many were duplicates, and whether an answer was unreadable and why.
 */
export function memoryLearnWorkflow(deps: MemoryLearnDeps) {
  return MEMORY_LEARN.implement({
    initial: (input) => ({ ...input, permit: false, done: false, learned: [] }),
    next: (state) =>
      state.done
        ? { end: 'completed', result: { learned: [...state.learned], duplicates: state.duplicates ?? 0, unreadable: (state.unreadable ?? null) !== null, reason: state.unreadable ?? null } }
        : state.permit
          ? { phase: 'learn' }
          : { phase: 'permit' },
    endedFacts: ({ state }) => ({
      learned: state.learned.length,
      duplicates: state.duplicates ?? 0,
      unreadable: (state.unreadable ?? null) !== null,
      reason: state.unreadable ?? null,
    }),
    phases: {
      permit: {
        async run(context) {
          const slot = await memoryPermits.take(deps.db, context.executionId, deps.permits);
          if (slot === null) return { state: context.state, wait: { until: new Date(context.clock.now() + PERMIT_WAIT_MS) } };
          return { state: { ...context.state, permit: true } };
        },
      },
      learn: {
        async run(context) {
          const state = context.state;
          const cursor = await memoryCursors.read(deps.db, state.botId, state.chatId);
          const rows = await deps.db.rows<{ position: string; role: string; content: string; turnId: string }>({
            name: 'memory.learn_messages_turns',
            text: `SELECT m.position::text AS position, m.role, m.content, m.turn_id AS "turnId"
                     FROM chat_messages m JOIN chat_turns t ON t.id = m.turn_id
                    WHERE m.chat_id = $1 AND t.state = 'ended' AND m.position > $2::bigint AND m.role IN ('user', 'assistant') AND m.content <> ''
                      AND m.position <= (SELECT max(position) FROM chat_messages WHERE turn_id = $3)
                    ORDER BY m.position LIMIT $4`,
            values: [state.chatId, cursor, state.turnId, MESSAGES_PER_STEP],
          });
          if (rows.length === 0) return { state: { ...state, done: true } };
          const messages = learningPrompt(rows);
          let result;
          try {
            result = await deps.models.call(context, {
              organizationId: state.organizationId,
              model: state.model,
              messages,
              tools: [],
              estimatedInputTokens: Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4),
              billing: { scopeKind: state.scope.kind, scopeId: state.scope.id, botId: state.botId, chatId: state.chatId, turnId: state.turnId },
              eventStep: context.step,
              // Checked right before each attempt sends: a learner that lost its permit sends nothing (LIM-01).
              beforeSend: async () => {
                if ((await memoryPermits.slotOf(deps.db, context.executionId)) === null) throw new PermitLost();
              },
            });
          } catch (error) {
            // No budget left: learning is skipped, the Turn's answer stands.
            if (error instanceof BudgetStop) return { state: { ...state, done: true } };
            if (error instanceof RateLimitWait) return { state, wait: { until: new Date(context.clock.now() + error.waitMs) } };
            // It waits for a permit again, then asks anew.
            if (error instanceof PermitLost) return { state: { ...state, permit: false } };
            throw error;
          }
          const answer = parseLearned(result.text);
          const learned = answer.items;
          const last = rows.at(-1)!.position;
          const sources = [
            { type: 'chat' as const, id: state.chatId },
            { type: 'turn' as const, id: state.turnId },
          ];
          const { ids, duplicates } = await deps.memory.changing(state.botId, async (tx) => {
            const added: string[] = [];
            let equal = 0;
            // The organization's memory items are limited (decision 076): what does not fit is not stored.
            const room = await deps.memory.room(tx, state.organizationId);
            const access = learned.length === 0 ? null : await learnedAccess(tx, { ...state, learnAccess: state.learnAccess ?? 'member', read: state.read ?? [] }, rows.map((row) => row.turnId));
            if (access !== null) {
              const seen = new Set<string>();
              for (const [index, item] of learned.entries()) {
                // What does not fit the organization's room is not stored; a duplicate takes no room.
                if (added.length >= room) break;
                const id = learnedItemId(context.executionId, last, index);
                // Equal to an item of this answer or of the Bot's memory with the same access rule: kept once (decision 086).
                const normalized = normalizedContent(item.content);
                if (seen.has(normalized) || (await deps.memory.equalItem(tx, state.organizationId, state.botId, { content: item.content, access }, id)) !== null) {
                  equal++;
                  continue;
                }
                seen.add(normalized);
                // Null: the ID holds an item this learner did not write; it is neither changed nor answered.
                const stored = await deps.memory.insert(tx, state.organizationId, state.botId, id, { content: item.content, tags: item.tags, access, sources });
                if (stored !== null) added.push(id);
              }
            }
            await memoryCursors.commit(tx, state.botId, state.chatId, last);
            return { ids: added, duplicates: equal };
          });
          return {
            state: {
              ...state,
              learned: [...state.learned, ...ids],
              duplicates: (state.duplicates ?? 0) + duplicates,
              unreadable: state.unreadable ?? answer.unreadable,
              done: rows.length < MESSAGES_PER_STEP,
            },
          };
        },
      },
    },
    async end(context) {
      await context.tx.query(memoryPermits.releaseStatement, [context.executionId]);
    },
  });
}

/** The learner no longer holds its shared permit: the attempt is not sent. */
export class PermitLost extends Error {
  readonly safeToRetry = false;
  readonly notSent = true;
  constructor() {
    super('the learning execution no longer holds its memory helper permit');
  }
}

/** A learned item's ID from its execution, step position and index: a replay inserts the same IDs. */
export function learnedItemId(executionId: string, position: string, index: number): string {
  const hex = createHash('sha256').update(`${executionId}:${position}:${index}`).digest('hex');
  // UUID layout, version 8 (custom), RFC 4122 variant.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
