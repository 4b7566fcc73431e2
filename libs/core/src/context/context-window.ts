import type { ChatMessage, ToolDefinition } from '../model/chat';
import { ModelFailure } from '../model/model-provider';

/**
 * Context-size management. Token counts are estimates (about 4 characters per token plus a fixed
 * overhead per message), deliberately pessimistic: the provider's tokenizer is not available here,
 * and a prompt that is a little short is cheaper than one the provider rejects.
 */
export const CHARS_PER_TOKEN = 4;
export const MESSAGE_OVERHEAD_TOKENS = 4;
const TOOL_CALL_OVERHEAD_TOKENS = 8;

export interface ModelLimits {
  /** The model's whole context window, in tokens. */
  readonly contextTokens: number;
  /** Tokens kept free for the answer. */
  readonly maxOutputTokens: number;
}

export const DEFAULT_MODEL_LIMITS: ModelLimits = { contextTokens: 128_000, maxOutputTokens: 4_096 };

/** Limits of a model by its id, falling back to `fallback` for models not listed in `known`. */
export function modelLimits(
  model: string,
  known: Readonly<Record<string, ModelLimits>> = {},
  fallback: ModelLimits = DEFAULT_MODEL_LIMITS,
): ModelLimits {
  return known[model] ?? fallback;
}

function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function estimateMessageTokens(message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + textTokens(message.content);
  for (const call of message.toolCalls ?? []) {
    tokens += TOOL_CALL_OVERHEAD_TOKENS + textTokens(call.callId + call.name + call.arguments);
  }
  if (message.toolCallId) tokens += textTokens(message.toolCallId);
  return tokens;
}

export function estimateToolTokens(tools: readonly ToolDefinition[]): number {
  return tools.reduce((sum, tool) => sum + TOOL_CALL_OVERHEAD_TOKENS + textTokens(tool.name + tool.description + JSON.stringify(tool.parameters)), 0);
}

export function estimatePromptTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  return messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0) + estimateToolTokens(tools);
}

export interface FitResult<M extends ChatMessage = ChatMessage> {
  readonly messages: readonly M[];
  /** How many messages were left out. */
  readonly dropped: number;
  readonly estimatedTokens: number;
}

/**
 * Drops the oldest non-system messages until the prompt fits `limits` (window minus the answer's
 * reserve). An assistant message with tool calls and the tool messages answering it form one unit
 * and are dropped together: a provider rejects a tool result without its call and vice versa.
 * The last unit (the newest input) is never dropped; if even that does not fit, the request could
 * never succeed, so this fails with `context-too-long` instead of calling the model.
 */
export function fitToContext<M extends ChatMessage>(messages: readonly M[], limits: ModelLimits, tools: readonly ToolDefinition[] = []): FitResult<M> {
  const budget = limits.contextTokens - limits.maxOutputTokens;
  const units = groupUnits(messages);
  let total = estimatePromptTokens(messages, tools);
  const dropped = new Set<Unit<M>>();
  const droppable = units.filter((unit) => !unit.pinned).slice(0, -1);
  for (const unit of droppable) {
    if (total <= budget) break;
    dropped.add(unit);
    total -= unit.tokens;
  }
  if (total > budget) {
    throw new ModelFailure('context-too-long', `The prompt needs about ${total} tokens; the model allows ${budget}.`);
  }
  const kept = units.filter((unit) => !dropped.has(unit)).flatMap((unit) => unit.messages);
  return { messages: kept, dropped: messages.length - kept.length, estimatedTokens: total };
}

interface Unit<M extends ChatMessage> {
  readonly messages: M[];
  readonly pinned: boolean;
  tokens: number;
}

/** Splits a conversation into units that are kept or dropped as a whole. */
function groupUnits<M extends ChatMessage>(messages: readonly M[]): Unit<M>[] {
  const units: Unit<M>[] = [];
  let open: { unit: Unit<M>; pending: Set<string> } | undefined;
  for (const message of messages) {
    const tokens = estimateMessageTokens(message);
    if (message.role === 'tool' && open && message.toolCallId !== undefined && open.pending.has(message.toolCallId)) {
      open.unit.messages.push(message);
      open.unit.tokens += tokens;
      open.pending.delete(message.toolCallId);
      continue;
    }
    const unit: Unit<M> = { messages: [message], pinned: message.role === 'system', tokens };
    units.push(unit);
    const calls = message.role === 'assistant' ? (message.toolCalls ?? []) : [];
    open = calls.length > 0 ? { unit, pending: new Set(calls.map((call) => call.callId)) } : undefined;
  }
  return units;
}
