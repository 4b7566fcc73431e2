import type { ToolCall } from '@openbot/core';
import { DomainFailure, isFinal, isUuid, newId, type ExecutionId } from '@openbot/domain';
import type { ExecutionView } from '@openbot/engine';
import type { Database, Sql } from '../../../../platform/src/database/sql';
import { LimitsUnreadable } from '../../../../platform/src/billing/limits-unreadable';
import { subtreeCost } from '../../../../platform/src/billing/tree-cost';
import { ANY_LIMIT_SQL } from '../../../../platform/src/billing/budget-usage';
import type { DefaultPrice } from '../../../../platform/src/config/config';
import { checkInputAffordable, checkTurnAdmission, type TurnAdmissionLimits } from '../commands/turn-admission-limits';
import type { BotTool } from '../../bots/bot-view';
import type { ToolAnswer } from '../../../../platform/src/turn-core/tool-answer';
import { routeIssues, type TurnTool } from '../../../../platform/src/turn-core/turn-tool';
import { TURN, type TurnPhaseContext } from '../../../../platform/src/turn-core/turn-contract';
import { countedMs, type TurnState } from '../../../../platform/src/turn-core/turn-state';

/** What a delegate call needs from its node. */
export interface DelegateDeps {
  readonly db: Database;
  readonly readExecution: (id: ExecutionId) => Promise<ExecutionView | null>;
  /** OPENBOT_MAX_DELEGATION_DEPTH */
  readonly maxDepth: number;
  /** The organization limits and default price a message's Turn is admitted under: a task's Turn passes the same (IDN-05). */
  readonly admission: { readonly limits: TurnAdmissionLimits; readonly defaultPrice: DefaultPrice | null };
}

const error = (modelOutput: string): { answer: ToolAnswer } => ({ answer: { modelOutput: `Error: ${modelOutput}`, isError: true } });

/**
 * Starts a task (decision 025): a child Turn of the tool's Bot, in a Chat of its own whose first
 * message is the call's `input`. The Chat, its Turn and message rows are written and the child
 * started in this phase's checkpoint transaction, with `task.started` (STC-01): a takeover
 * before it commits starts nothing, one after it finds the child saved in the Turn's state. The
 * child carries the Turn's identity, naming this execution as its source (IDN-02), and the
 * Turn's remaining limits as caps its own Bot's limits can only tighten.
 */
export async function startTask(context: TurnPhaseContext, state: TurnState, tool: BotTool, call: ToolCall, deps: DelegateDeps): Promise<{ answer: ToolAnswer } | { childId: string }> {
  const depth = (state.depth ?? 0) + 1;
  if (depth > deps.maxDepth) return error(`delegation is limited to ${deps.maxDepth} levels; "${call.name}" was not started.`);
  let input: unknown;
  try {
    input = (JSON.parse(call.arguments) as { input?: unknown }).input;
  } catch {
    input = undefined;
  }
  if (typeof input !== 'string' || input.trim() === '') return error(`"${call.name}" needs { "input": "<the task>" }.`);
  const bot = await deps.db.one<{ id: string }>({
    name: 'turn.delegate_bot',
    text: 'SELECT id FROM bots WHERE id = $1 AND organization_id = $2',
    values: [tool.botId, state.organizationId],
  });
  if (bot === undefined) return error(`the Bot of "${call.name}" no longer exists; no task was started.`);
  const chatId = newId();
  const refused = await admissionRefusal(deps, state, tool.botId!, chatId);
  if (refused !== null) return error(`${refused} No task was started.`);
  const limits = state.bot!.limits;
  const caps = {
    maxSteps: Math.max(1, limits.maxSteps - state.step),
    maxSeconds: Math.max(1, Math.ceil((limits.maxSeconds * 1000 - countedMs(state, context.clock.now())) / 1000)),
    maxOutputTokens: Math.max(1, limits.maxOutputTokens - state.outputTokens),
    // What this Turn and its tasks have not spent yet, from saved usage and holds (a failed read stops the call, DLG-01).
    ...(limits.maxCostMicros == null ? {} : { maxCostMicros: Math.max(1, limits.maxCostMicros - Number(await spentSoFar(deps.db, context.executionId))) }),
  };
  const turnId = newId();
  const childId = context.startChild(
    TURN,
    { chatId, turnId, organizationId: state.organizationId, scope: state.scope, depth, caps, ...(tool.attached === false ? { attached: false } : {}) },
    // The task's identity records this hop and runs as the target Bot, narrowed (IDN-02).
    { attached: tool.attached !== false, resource: { type: 'turn', id: turnId }, identityHint: { delegateTo: tool.botId! } },
  );
  context.commands.write(
    `INSERT INTO chats (id, organization_id, bot_id, parent_execution_id, active_turn_id, last_position, last_turn_seq) VALUES ($1, $2, $3, $4, $5, 1, 1)
     ON CONFLICT (id) DO NOTHING`,
    [chatId, state.organizationId, tool.botId, context.executionId, turnId],
  );
  context.commands.write(
    `INSERT INTO chat_turns (id, chat_id, seq, execution_id, state, scope_kind, scope_id) VALUES ($1, $2, 1, $3, 'running', $4, $5) ON CONFLICT (id) DO NOTHING`,
    [turnId, chatId, childId, state.scope.kind, state.scope.id],
  );
  context.commands.write(`INSERT INTO chat_messages (id, chat_id, turn_id, position, role, content) VALUES ($1, $2, $3, 1, 'user', $4) ON CONFLICT (id) DO NOTHING`, [
    newId(),
    chatId,
    turnId,
    input,
  ]);
  context.emit('task.started', { callId: call.callId, executionId: childId, botId: tool.botId ?? null }, { step: state.step });
  return { childId };
}

/**
 * A task's Turn passes what a message's Turn passes (IDN-05), through the same functions as
 * PostMessage: budgets, credits and the model's price for the target Bot, then the organization's
 * `runningTurns` limit (tasks' Turns count). Its refusal is the message's own failure text, the
 * call's error result. These reads run in a transaction of their own, before the checkpoint that
 * writes the task: a phase cannot hold a lock into its checkpoint, so Turns racing for the last
 * running slot may pass the limit by the few that raced, as a task started just before would.
 */
async function admissionRefusal(deps: DelegateDeps, state: TurnState, botId: string, chatId: string): Promise<string | null> {
  try {
    await deps.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ limited: boolean }>({
        name: 'turn.delegate_limited',
        text: `SELECT ${ANY_LIMIT_SQL} AS limited`,
        values: [state.organizationId, state.scope.kind, state.scope.id, botId],
      });
      const rules = { organizationId: state.organizationId, scope: state.scope, botId, limited: rows[0]!.limited, defaultPrice: deps.admission.defaultPrice };
      await checkInputAffordable(tx, rules);
      await checkTurnAdmission(tx, state.organizationId, chatId, false, deps.admission.limits);
    });
    return null;
  } catch (failure) {
    if (failure instanceof DomainFailure) return failure.message;
    throw failure;
  }
}

/** What this Turn's subtree has cost; a read that fails is a stopped limit check, never a guess (DLG-01). */
async function spentSoFar(db: Sql, executionId: string): Promise<bigint> {
  try {
    return await subtreeCost(db, executionId);
  } catch (cause) {
    throw new LimitsUnreadable('what the delegating Turn has spent', { cause });
  }
}

/**
 * An attached task's answer once it ended: its final reply, or its state with the category and
 * error ID it ended with (ERR-01: the child's own ID, never a new one). `running` while it runs.
 */
export async function taskAnswer(context: TurnPhaseContext, state: TurnState, childId: string, call: ToolCall, deps: DelegateDeps): Promise<ToolAnswer | 'running'> {
  const child = await deps.readExecution(childId as ExecutionId);
  // A task the Turn saved but cannot read stops the call (DLG-01): never taken as still running, never as done.
  if (child === null) throw new Error(`task ${childId} of call ${call.callId} cannot be read`);
  if (!isFinal(child.state)) return 'running';
  context.publisher.publish('task.ended', { callId: call.callId, executionId: childId, state: child.state }, { step: state.step });
  if (child.state === 'completed') {
    const reply = await deps.db.one<{ content: string }>({
      name: 'turn.task_reply',
      text: `SELECT m.content FROM chat_turns t JOIN chat_messages m ON m.turn_id = t.id AND m.role = 'assistant'
              WHERE t.execution_id = $1 ORDER BY m.position DESC LIMIT 1`,
      values: [childId],
    });
    return { modelOutput: reply?.content ?? '', isError: false };
  }
  const failure = child.errorId !== null ? { category: child.category ?? 'internal', errorId: child.errorId } : undefined;
  return {
    modelOutput: JSON.stringify({ state: child.state, ...(failure ?? {}) }),
    isError: true,
    ...(failure === undefined ? {} : { failure }),
  };
}

/**
 * The `delegate` tool kind (decision 025, decision 078): the first look at a call starts its task
 * (announced once it started or was refused: a stopped limit check announces nothing yet); an
 * attached task answers the call when it ends, a detached one answers its ID at once.
 */
export function delegateTool(deps: DelegateDeps): TurnTool {
  return {
    kind: 'delegate',
    answers: 'turn',
    needsChild: true,
    validate: (tool, index) => [
      ...routeIssues(tool, index, 'a delegate tool'),
      // Whether the Bot is the organization's is checked against the database (checkDelegateBots, IDN-08).
      ...(tool.botId === undefined || !isUuid(tool.botId) ? [{ path: `tools.${index}.botId`, message: 'a delegate tool needs the botId of a Bot of this organization' }] : []),
    ],
    async answer({ tool, call, phase, state, child, called }) {
      if (child === undefined) {
        const started = await startTask(phase, state, tool, call, deps);
        called();
        if ('answer' in started) return started;
        // A detached task may outlive the Turn: the call answers with its ID at once.
        if (tool.attached === false) return { answer: { modelOutput: JSON.stringify({ executionId: started.childId }), isError: false }, child: started.childId };
        return { waiting: 'child', child: started.childId };
      }
      const answered = await taskAnswer(phase, state, child, call, deps);
      return answered === 'running' ? { waiting: 'child' } : { answer: answered };
    },
  };
}
