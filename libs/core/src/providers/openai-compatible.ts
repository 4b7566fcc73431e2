import { fileNote, type ChatMessage, type FilePart, type FilePartType, type ToolDefinition } from '../model/chat';
import {
  ModelFailure,
  type FinishReason,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from '../model/model-provider';
import { providerErrorDetail } from '../model/provider-error';
import { errorOfBody, parseRetryAfter, SseEndpoint, type SseEndpointOptions } from './sse-request';

/** The adapter's options: those of every SSE endpoint (`baseUrl` gets `/chat/completions`). */
export type OpenAiCompatibleOptions = SseEndpointOptions;

/** Error codes and phrases OpenAI-compatible servers use when the prompt is too long. */
const CONTEXT_TOO_LONG = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long/i;

interface OpenAiToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface OpenAiChunk {
  choices?: { delta?: { content?: string | null; tool_calls?: OpenAiToolCallDelta[] }; finish_reason?: string | null }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number | null } | null } | null;
  error?: { message?: string; code?: string | number | null; type?: string };
}

/**
 * The `openai-compatible` provider (docs/http-api.md, model providers): streaming chat completions with function
 * tools and usage over plain HTTP. It makes exactly one request per `stream` call; retries are the
 * caller's (CALL-04), and it reports failures only as categorised `ModelFailure`s.
 */
export class OpenAiCompatibleProvider implements ModelProvider {
  private readonly endpoint: SseEndpoint;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.endpoint = new SseEndpoint(options, '/chat/completions');
  }

  stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    return this.endpoint.stream(request, {
      headers: this.headers(request.idempotencyKey),
      body: this.body(request),
      httpFailure,
      assembler: new ChunkAssembler(),
    });
  }

  private headers(idempotencyKey: string | undefined): Record<string, string> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
    if (this.options.apiKey) headers.Authorization = `Bearer ${this.options.apiKey}`;
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    return headers;
  }

  private body(request: ModelRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model,
      messages: toOpenAiMessages(request.messages),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
    // Some servers reject an empty `tools` array, so it is left out when there are none.
    if (request.tools.length > 0) body.tools = request.tools.map(toOpenAiTool);
    return body;
  }
}

/** The file parts Chat Completions takes natively: text and images (`image_url` data URLs); a PDF becomes a note. */
export const OPENAI_FILE_PARTS: readonly FilePartType[] = ['text', 'image'];

function openAiPart(part: FilePart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: `File "${part.name}":\n${part.text}` };
    case 'image':
      return { type: 'image_url', image_url: { url: `data:${part.mediaType};base64,${part.data}` } };
    case 'document':
      return { type: 'text', text: fileNote(part) };
  }
}

/**
 * Chat messages in Chat Completions form. Tool messages take text only and must follow their
 * assistant message directly, so the images of a run of tool results go in one user message
 * right after the run, each introduced by the call it came from.
 */
export function toOpenAiMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let deferred: Record<string, unknown>[] = [];
  const flush = (): void => {
    if (deferred.length > 0) out.push({ role: 'user', content: deferred });
    deferred = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') flush();
    out.push(toOpenAiMessage(message));
    if (message.role === 'tool') {
      const images = (message.files ?? []).filter((part) => part.type === 'image');
      if (images.length > 0) deferred.push({ type: 'text', text: `Images from tool call ${message.toolCallId}:` }, ...images.map(openAiPart));
    }
  }
  flush();
  return out;
}

export function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: message.role, content: message.content };
    case 'user': {
      const files = message.files ?? [];
      if (files.length === 0) return { role: 'user', content: message.content };
      const text = message.content === '' ? [] : [{ type: 'text', text: message.content }];
      return { role: 'user', content: [...text, ...files.map(openAiPart)] };
    }
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.callId,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
    }
    case 'tool': {
      // Text files join the text; images follow the run of tool messages (toOpenAiMessages).
      const texts = (message.files ?? []).filter((part) => part.type !== 'image').map((part) => (part.type === 'text' ? `File "${part.name}":\n${part.text}` : fileNote(part)));
      return { role: 'tool', tool_call_id: message.toolCallId, content: [message.content, ...texts].filter((t) => t !== '').join('\n\n') };
    }
  }
}

function toOpenAiTool(tool: ToolDefinition): Record<string, unknown> {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

/** Turns streamed chunks into port events, joining tool-call fragments by their `index`. */
class ChunkAssembler {
  done = false;
  private finishReason: FinishReason | undefined;
  private readonly calls = new Map<number, { callId: string; name: string; arguments: string }>();
  private callsEmitted = false;

  accept(payload: string): ModelStreamEvent[] {
    if (payload.trim() === '[DONE]') {
      this.done = true;
      return [...this.flushCalls(), { type: 'finish', reason: this.finalReason() }];
    }
    let chunk: OpenAiChunk;
    try {
      chunk = JSON.parse(payload) as OpenAiChunk;
    } catch (error) {
      throw new ModelFailure('unavailable', 'The model provider sent a malformed stream chunk.', { cause: error });
    }
    if (chunk.error) throw bodyFailure(undefined, chunk.error, undefined);
    const events: ModelStreamEvent[] = [];
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string' && delta.content !== '') events.push({ type: 'text', text: delta.content });
      for (const fragment of delta.tool_calls ?? []) this.addFragment(fragment);
      if (choice.finish_reason) {
        this.finishReason = toFinishReason(choice.finish_reason);
        events.push(...this.flushCalls());
      }
    }
    if (chunk.usage) {
      const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
      events.push({
        type: 'usage',
        inputTokens: chunk.usage.prompt_tokens ?? 0,
        outputTokens: chunk.usage.completion_tokens ?? 0,
        // The cached part of the prompt, priced apart; absent when the server does not say.
        ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
      });
    }
    return events;
  }

  /** The body ended without `[DONE]`: complete only if a finish reason was already seen. */
  end(): ModelStreamEvent[] | undefined {
    if (this.finishReason === undefined) return undefined;
    this.done = true;
    return [...this.flushCalls(), { type: 'finish', reason: this.finishReason }];
  }

  private addFragment(fragment: OpenAiToolCallDelta): void {
    const index = fragment.index ?? 0;
    const call = this.calls.get(index) ?? { callId: '', name: '', arguments: '' };
    if (fragment.id) call.callId = fragment.id;
    if (fragment.function?.name) call.name += fragment.function.name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    this.calls.set(index, call);
  }

  private flushCalls(): ModelStreamEvent[] {
    if (this.callsEmitted) return [];
    this.callsEmitted = true;
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({
        type: 'tool-call' as const,
        callId: call.callId || `call_${index}`,
        name: call.name,
        arguments: call.arguments || '{}',
      }));
  }

  private finalReason(): FinishReason {
    return this.finishReason ?? (this.calls.size > 0 ? 'tool_calls' : 'stop');
  }
}

function toFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'length';
    default:
      return 'stop';
  }
}

async function httpFailure(response: Response, limitBytes: number): Promise<ModelFailure> {
  const error = await errorOfBody<NonNullable<OpenAiChunk['error']>>(response, limitBytes);
  return bodyFailure(response.status, error, response.headers.get('retry-after'));
}

function bodyFailure(status: number | undefined, error: OpenAiChunk['error'], retryAfter: string | null | undefined): ModelFailure {
  const message = `Model provider error${status ? ` ${status}` : ''}: ${error?.message ?? 'no details'}`;
  const code = String(error?.code ?? error?.type ?? '');
  // What is safe to show of the answer (decision 082); the message above stays sealed.
  const detail = providerErrorDetail(status, error?.code ?? error?.type, error?.message);
  if (status === 429 || code === 'rate_limit_exceeded') {
    return new ModelFailure('rate-limited', message, { status, retryAfterSeconds: parseRetryAfter(retryAfter), detail });
  }
  if (status === 408) return new ModelFailure('timeout', message, { status, detail });
  if (status === undefined || status >= 500) return new ModelFailure('unavailable', message, { status, detail });
  if (CONTEXT_TOO_LONG.test(code) || CONTEXT_TOO_LONG.test(error?.message ?? '')) {
    return new ModelFailure('context-too-long', message, { status, detail });
  }
  return new ModelFailure('invalid-request', message, { status, detail });
}

