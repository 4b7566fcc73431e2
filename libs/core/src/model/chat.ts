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

/**
 * A file as a model receives it, beside a message's text: a text file's content (or a short note
 * that a file is gone), an image, or a PDF document. `data` is base64. Which kinds an adapter
 * sends natively is its `FILE_PARTS`; a kind it cannot send reaches the model as a short note.
 */
export type FilePart =
  | { readonly type: 'text'; readonly name: string; readonly text: string }
  | { readonly type: 'image'; readonly name: string; readonly mediaType: string; readonly data: string }
  | { readonly type: 'document'; readonly name: string; readonly mediaType: 'application/pdf'; readonly data: string };

export type FilePartType = FilePart['type'];

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  /** Files attached to a user message, or carried by a tool result (STC-09), in order. */
  readonly files?: readonly FilePart[];
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
  /** Files the tool hands the model with its text (STC-09): sent as the adapter supports them. */
  readonly modelOutputFiles?: readonly FilePart[];
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
  const files = result.modelOutputFiles ?? [];
  return { role: 'tool', content: result.modelOutput, toolCallId: result.callId, ...(files.length > 0 ? { files } : {}) };
}

/** What a model is told in place of a file its provider cannot take. */
export function fileNote(part: FilePart): string {
  return `[file "${part.name}" (${part.type === 'text' ? 'text' : part.mediaType}) cannot be shown to this model]`;
}
