import type { ToolCall } from '@openbot/core';
import { newId } from '@openbot/domain';
import { MAX_REMIND_IN_SECONDS } from '../bots/bot-view';
import { REMINDER } from './reminder-contract';
import type { ToolAnswer } from '../../../platform/src/turn-core/tool-answer';
import type { TurnPhaseContext } from '../../../platform/src/turn-core/turn-contract';
import { routeIssues, type TurnTool } from '../../../platform/src/turn-core/turn-tool';
import type { TurnState } from '../../../platform/src/turn-core/turn-state';

const MAX_MESSAGE_LENGTH = 10_000;

/**
 * The built-in `remind` tool (APPR-01, FW-06): a durable command, never an in-memory timer. The
 * reminder row and its delivery execution (a detached child of the Turn, with the Turn's
 * identity, waiting on a durable timer) are written in this phase's checkpoint transaction,
 * with the call's saved result: a replayed call reuses that result and sets nothing again, and
 * the row's (execution, call) key refuses a second one. Arguments that do not fit are an error
 * result and set nothing.
 */
export function setReminder(context: TurnPhaseContext, state: TurnState, call: ToolCall): ToolAnswer {
  const now = context.clock.now();
  const parsed = parseReminder(call.arguments, now);
  if (typeof parsed === 'string') return { modelOutput: `Error: ${parsed}`, isError: true };
  const reminderId = newId();
  const deliveryId = context.startChild(
    REMINDER,
    { reminderId, organizationId: state.organizationId, chatId: state.chatId, dueAt: parsed.dueAt, scope: state.scope },
    { attached: false, resource: { type: 'reminder', id: reminderId } },
  );
  context.commands.write(
    `INSERT INTO reminders (id, organization_id, chat_id, execution_id, call_id, message, due_at, delivery_execution_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (execution_id, call_id) DO NOTHING`,
    [reminderId, state.organizationId, state.chatId, context.executionId, call.callId, parsed.message, new Date(parsed.dueAt), deliveryId],
  );
  return { modelOutput: JSON.stringify({ reminderId, dueAt: new Date(parsed.dueAt).toISOString() }), isError: false };
}

/** `{ message, at | inSeconds }`, exactly one of the two; a time in the past is refused. */
function parseReminder(raw: string, now: number): { message: string; dueAt: number } | string {
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    args = null;
  }
  const usage = 'remind needs { "message": "<text>", "at": "<ISO time>" } or { "message": "<text>", "inSeconds": <1..31536000> }';
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return usage;
  const { message, at, inSeconds } = args as { message?: unknown; at?: unknown; inSeconds?: unknown };
  if (typeof message !== 'string' || message.trim() === '' || message.length > MAX_MESSAGE_LENGTH) return usage;
  if ((at === undefined) === (inSeconds === undefined)) return `${usage}: give exactly one of at and inSeconds`;
  if (inSeconds !== undefined) {
    if (typeof inSeconds !== 'number' || !Number.isInteger(inSeconds) || inSeconds < 1 || inSeconds > MAX_REMIND_IN_SECONDS) return usage;
    return { message, dueAt: now + inSeconds * 1000 };
  }
  const dueAt = typeof at === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(at) ? Date.parse(at) : Number.NaN;
  if (Number.isNaN(dueAt)) return `${usage}: at must be an ISO time`;
  if (dueAt <= now) return 'remind: at must be in the future';
  if (dueAt - now > MAX_REMIND_IN_SECONDS * 1000) return 'remind: at must be within a year';
  return { message, dueAt };
}

/** The `remind` tool kind (decision 078): the reminder is set in the Turn's checkpoint with the call's result. */
export const remindTool: TurnTool = {
  kind: 'remind',
  answers: 'turn',
  needsChild: false,
  validate: (tool, index) => routeIssues(tool, index, 'a remind tool'),
  answer: ({ call, phase, state, called }) => {
    called();
    return Promise.resolve({ answer: setReminder(phase, state, call) });
  },
};
