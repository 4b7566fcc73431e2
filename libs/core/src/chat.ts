/**
 * Chat data shared by model steps, tool steps, context management and hosts. Plain values only:
 * hosts may persist them as JSON, so nothing here holds functions or class instances.
 */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** One tool call requested by the model; `arguments` is the JSON text exactly as the model sent it. */
export interface ToolCall {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
}

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  /** Only on assistant messages that ask for tools. */
  readonly toolCalls?: readonly ToolCall[];
  /** Only on tool messages: the call this message answers. */
  readonly toolCallId?: string;
}

/** A JSON Schema object describing a tool's arguments. */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
}

/**
 * The result of one tool call. `modelOutput` is the text sent to the model (STC-09); there is no
 * legacy `content` field on results — the tool message's `content` is derived from `modelOutput`.
 */
export interface ToolResult {
  readonly callId: string;
  readonly name: string;
  readonly modelOutput: string;
  /** The tool failed (unknown tool, bad arguments, handler error); the model is told in `modelOutput`. */
  readonly isError: boolean;
}

/** Token counts reported by the provider for one model call. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The part of `inputTokens` read from the provider's prompt cache, when it says (priced apart). */
  readonly cachedInputTokens?: number;
}

export function systemMessage(content: string): ChatMessage {
  return { role: 'system', content };
}

export function userMessage(content: string): ChatMessage {
  return { role: 'user', content };
}

/** The tool message that carries a result back to the model: its content is exactly `modelOutput` (STC-09). */
export function toolMessage(result: ToolResult): ChatMessage {
  return { role: 'tool', content: result.modelOutput, toolCallId: result.callId };
}
