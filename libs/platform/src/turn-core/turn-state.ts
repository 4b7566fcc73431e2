import type { ChatMessage, ToolCall, ToolResult } from '@openbot/core';
import type { WorkflowDecision } from '@openbot/engine';
import type { BotLimits, BotTool } from './tool-spec';
import type { MemoryLearnAccess } from './tool-spec';

export const TURN_WORKFLOW = 'chat.turn';

/**
 * A message of the Turn as it is saved: a core ChatMessage and the IDs of the files it carries to
 * the model (a user message's attachments, a tool result's files, STC-09). The bytes are read at
 * each model call's send and never saved with the Turn (decision 036).
 */
export type TurnMessage = ChatMessage & { readonly fileIds?: readonly string[] };

/** A tool call's result as the Turn keeps it: its `modelOutput` text and files (STC-09). */
export type TurnToolResult = ToolResult & { readonly fileIds?: readonly string[] };

/** The Turn's plan, as its update_plan tool saved it last (`updatedAt`: engine clock epoch ms). */
export interface TurnPlan {
  readonly steps: ReadonlyArray<{ readonly title: string; readonly status: 'pending' | 'in_progress' | 'done' | 'skipped' }>;
  readonly updatedAt: number;
}

/** A call of the last step that waits for an approval; `expiresAt` is epoch ms (engine clock) or null. */
export interface GatedCall {
  readonly callId: string;
  readonly approvalId: string;
  readonly expiresAt: number | null;
}

/** The remaining steps, seconds, output tokens and cost a task's parent hands it (IDN-02). */
export interface TaskCaps {
  readonly maxSteps: number;
  readonly maxSeconds: number;
  readonly maxOutputTokens: number;
  /** What was left of the parent's cost cap when the task started; absent: the parent had none. */
  readonly maxCostMicros?: number;
}

/** What a Turn's execution is submitted with. */
export interface TurnInput {
  readonly chatId: string;
  readonly turnId: string;
  readonly organizationId: string;
  /** The identity whose input the Turn answers: the billing identity of its model calls (USE-01). */
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string };
  /** A task's delegation depth: 1 for a task of a Chat's Turn, 2 for its task… (absent: 0, not a task). */
  readonly depth?: number;
  /** A task's limits from its parent's remaining ones: its Bot's own limits can only be tighter (IDN-02). */
  readonly caps?: TaskCaps;
  /** A task: false when detached (its end is a notice to its parent's Chat, TASK-04). Absent: attached, or not a task. */
  readonly attached?: boolean;
}

/** The Bot as the Turn saw it at its first step: later edits of the Bot do not change a running Turn (STC-07). */
export interface BotSnapshot {
  readonly id: string;
  readonly model: string;
  readonly instructions: string;
  readonly tools: readonly BotTool[];
  /** `maxCostMicros` is absent on Turns saved before it existed: no cap. */
  readonly limits: Required<Omit<BotLimits, 'maxCostMicros'>> & Pick<BotLimits, 'maxCostMicros'>;
  /** The Bot's memory switches; absent on Turns saved before memory existed: both off. `learnAccess` absent: `member`. */
  readonly memory?: { readonly enabled: boolean; readonly learn: boolean; readonly learnAccess?: MemoryLearnAccess };
}

/** The memories a Turn's memory selected for its context, saved with the checkpoint that emitted `memory.read`. */
export interface TurnMemory {
  readonly ids: readonly string[];
  readonly contents: readonly string[];
}

/** Why a Turn ended; `budget`: a budget or the credits had nothing left for its next model call (PLAT-08); `max-cost`: its Bot's `limits.maxCostMicros`. */
export type TurnStop = 'stop' | 'length' | 'max-steps' | 'max-output-tokens' | 'max-cost' | 'budget';

/** What the Turn decides next: a model or tool step, or its end with why it stopped. */
export type TurnDecision = WorkflowDecision<'model' | 'tool', { readonly stop: TurnStop }>;

/** The saved state of a Turn: sealed at every checkpoint (STC-05), so a takeover resumes from it. */
export interface TurnState extends TurnInput {
  readonly bot: BotSnapshot | null;
  /** Epoch milliseconds of the first step: the Turn's time limit counts from here. */
  readonly startedAt: number | null;
  /** Model steps done. */
  readonly step: number;
  /** The position of the last user message the model has seen (steering input comes after it). */
  readonly consumed: string;
  /** The Turn's own messages in order: user input, assistant steps, tool results. */
  readonly added: readonly TurnMessage[];
  /** Tool calls of the last model step: they run concurrently, each result is kept as it comes. */
  readonly pending: readonly ToolCall[];
  /** Results of `pending` so far, in the order they came. */
  readonly results: readonly TurnToolResult[];
  /** The background tool execution of a Turn saved before calls ran concurrently (one call at a time). */
  readonly child: string | null;
  /** The background tool executions of the last step's calls (FW-01), by call. */
  readonly children?: readonly { readonly callId: string; readonly childId: string }[];
  /** The calls of the last step that need a decision: their approval records (decision 025). */
  readonly gated?: readonly GatedCall[];
  readonly outputTokens: number;
  readonly stop: TurnStop | null;
  /**
   * The Turn's time (TASK-03), saved so that recovery never resets it (TASK-01): milliseconds
   * counted before `countingSince`, and since when it counts now (engine clock epoch ms; null
   * while it does not count: waiting only for approvals). Absent on Turns saved before: they count
   * from `startedAt`.
   */
  readonly activeMs?: number;
  readonly countingSince?: number | null;
  /** The execution's paused milliseconds already taken out of `countingSince`. */
  readonly pausedMsSeen?: number;
  /** The plan its update_plan tool saved last. */
  readonly plan?: TurnPlan;
  /** A phase found the time limit passed: the Turn ends `failed` with category `timeout`. */
  readonly timedOut?: boolean;
  /** What memory selected (Bots with memory enabled): the same context for every step and after a takeover. */
  readonly memory?: TurnMemory;
}

export function initialTurnState(input: TurnInput): TurnState {
  return {
    ...input,
    bot: null,
    startedAt: null,
    step: 0,
    consumed: '0',
    added: [],
    pending: [],
    results: [],
    child: null,
    outputTokens: 0,
    stop: null,
  };
}

/** The Turn's time as saved, with Turns saved before TASK-03 counting from their start. */
export function turnTime(state: TurnState): { readonly activeMs: number; readonly countingSince: number | null } {
  if (state.activeMs !== undefined) return { activeMs: state.activeMs, countingSince: state.countingSince ?? null };
  return { activeMs: 0, countingSince: state.startedAt };
}

/** Milliseconds the Turn has counted by `now`. */
export function countedMs(state: TurnState, now: number): number {
  const { activeMs, countingSince } = turnTime(state);
  return activeMs + (countingSince === null ? 0 : Math.max(0, now - countingSince));
}

/** When the Turn's time runs out if it keeps counting; null while it does not count (or before it started). */
export function turnDeadline(state: TurnState): Date | null {
  const { activeMs, countingSince } = turnTime(state);
  if (state.bot === null || countingSince === null) return null;
  return new Date(countingSince + state.bot.limits.maxSeconds * 1000 - activeMs);
}

/** The state with its time stopped at `now` (it waits only for people: TASK-03). */
export function stopCounting(state: TurnState, now: number): TurnState {
  return { ...state, activeMs: countedMs(state, now), countingSince: null };
}

/**
 * model step → tool steps → model step … until a final answer or a limit (steps, time, output
 * tokens). Tool calls of a step are all answered before the next model step, so no call is
 * ever left without its result.
 */
export function nextTurnDecision(state: TurnState, _wake: unknown, _now: number): TurnDecision {
  // The time limit is checked by each phase as it starts, once its pauses are taken out (TASK-03).
  if (state.timedOut === true) {
    return { end: 'failed', category: 'timeout', cause: new Error(`the Turn ran past its limit of ${state.bot!.limits.maxSeconds} s`) };
  }
  if (state.results.length < state.pending.length) return { phase: 'tool' };
  if (state.stop !== null) return { end: 'completed', result: { stop: state.stop } };
  if (state.bot !== null) {
    if (state.step >= state.bot.limits.maxSteps) return { end: 'completed', result: { stop: 'max-steps' } };
    if (state.outputTokens >= state.bot.limits.maxOutputTokens) return { end: 'completed', result: { stop: 'max-output-tokens' } };
  }
  return { phase: 'model' };
}


/**
 * The limit that ended a Turn, from its final state, as nextTurnDecision decided it (null: none
 * did): the `stop` of its partial reply (decision 084).
 */
export function endedByLimit(state: TurnState, outcome: string): TurnLimitStop | null {
  const stop = state.stop ?? (state.bot === null ? null : state.step >= state.bot.limits.maxSteps ? 'max-steps' : state.outputTokens >= state.bot.limits.maxOutputTokens ? 'max-output-tokens' : null);
  return turnLimitStop(state, outcome, stop ?? undefined);
}

/** The limits a Turn can end on, as `stop` shows them: a final answer, a length cut-off or a cancel is none. */
export type TurnLimitStop = 'max-steps' | 'max-seconds' | 'max-output-tokens' | 'max-cost' | 'budget';

/** Which limit ended the Turn (null when none did): the `stop` of its `execution.ended` event. */
export function turnLimitStop(state: TurnState, outcome: string, stop: TurnStop | undefined): TurnLimitStop | null {
  if (outcome === 'failed') return state.timedOut === true ? 'max-seconds' : null;
  if (outcome !== 'completed' || stop === undefined || stop === 'stop' || stop === 'length') return null;
  return stop;
}
