import type { ChatMessage, FilePart, FilePartType, ToolDefinition } from '../model/chat';
import {
  ModelFailure,
  type FinishReason,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
} from '../model/model-provider';
import { providerErrorDetail } from '../model/provider-error';
import { errorOfBody, parseRetryAfter, SseEndpoint, type SseEndpointOptions } from './sse-request';

/** The adapter's options: those of every SSE endpoint (`baseUrl` gets `/messages`), and `max_tokens`. */
export interface AnthropicOptions extends SseEndpointOptions {
  /** `max_tokens` of every request (the Messages API requires it); default 4096. */
  readonly maxTokens?: number;
}

export const ANTHROPIC_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;

/** Phrases the Messages API uses when the prompt does not fit the model's context window. */
const CONTEXT_TOO_LONG = /prompt is too long|context[_ ]length|context window|maximum context|too many tokens/i;

interface AnthropicError {
  type?: string;
  message?: string;
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** One `data:` payload of the Messages stream; `type` repeats the SSE `event:` name. */
interface AnthropicEvent {
  type?: string;
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: { type?: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: AnthropicError;
}

/**
 * The `anthropic` provider (docs/http-api.md, model providers): the Messages API, streaming, with tool use, over
 * plain HTTP. Like the openai-compatible adapter it makes exactly one request per `stream` call;
 * retries are the caller's (CALL-04), and it reports failures only as categorised `ModelFailure`s.
 */
export class AnthropicProvider implements ModelProvider {
  private readonly endpoint: SseEndpoint;
  private readonly maxTokens: number;

  constructor(private readonly options: AnthropicOptions) {
    this.endpoint = new SseEndpoint(options, '/messages');
    this.maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  }

  stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    return this.endpoint.stream(request, {
      headers: this.headers(request.idempotencyKey),
      body: this.body(request),
      httpFailure,
      assembler: new EventAssembler(),
    });
  }

  private headers(idempotencyKey: string | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    if (idempotencyKey) headers['Idempotency-Key'] = idempotencyKey;
    return headers;
  }

  private body(request: ModelRequest): Record<string, unknown> {
    const system = request.messages
      .filter((message) => message.role === 'system')
      .map((message) => message.content)
      .filter((content) => content !== '')
      .join('\n\n');
    const body: Record<string, unknown> = {
      model: request.model,
      max_tokens: request.maxTokens ?? this.maxTokens,
      messages: toAnthropicMessages(request.messages),
      stream: true,
    };
    if (system !== '') body.system = system;
    if (request.tools.length > 0) body.tools = request.tools.map(toAnthropicTool);
    return body;
  }
}

/** The file parts the Messages API takes natively: text, images and PDF documents (base64 sources). */
export const ANTHROPIC_FILE_PARTS: readonly FilePartType[] = ['text', 'image', 'document'];

function anthropicPart(part: FilePart): Record<string, unknown> {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: `File "${part.name}":\n${part.text}` };
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: part.mediaType, data: part.data } };
    case 'document':
      return { type: 'document', source: { type: 'base64', media_type: part.mediaType, data: part.data }, title: part.name };
  }
}

/**
 * Chat messages in Messages API form. System messages go to the top-level `system` field and are
 * left out here; tool results become `tool_result` blocks of a user message, consecutive ones
 * merged into one message because the API wants user and assistant turns to alternate.
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let toolResults: Record<string, unknown>[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      const files = message.files ?? [];
      const block = {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: files.length === 0 ? message.content : [...(message.content === '' ? [] : [{ type: 'text', text: message.content }]), ...files.map(anthropicPart)],
      };
      if (toolResults) {
        toolResults.push(block);
      } else {
        toolResults = [block];
        out.push({ role: 'user', content: toolResults });
      }
      continue;
    }
    toolResults = undefined;
    switch (message.role) {
      case 'system':
        break;
      case 'user': {
        const files = message.files ?? [];
        if (files.length === 0) {
          out.push({ role: 'user', content: message.content });
          break;
        }
        out.push({ role: 'user', content: [...(message.content === '' ? [] : [{ type: 'text', text: message.content }]), ...files.map(anthropicPart)] });
        break;
      }
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        if (calls.length === 0) {
          out.push({ role: 'assistant', content: message.content });
          break;
        }
        const content: Record<string, unknown>[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
        for (const call of calls) content.push({ type: 'tool_use', id: call.callId, name: call.name, input: toolInput(call.arguments) });
        out.push({ role: 'assistant', content });
        break;
      }
    }
  }
  return out;
}

/**
 * `tool_use.input` must be a JSON object. Arguments the model sent as broken JSON (the tool step
 * already answered them with an error result) are sent back as `{}` so the history stays valid.
 */
function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Fall through to the empty object.
  }
  return {};
}

function toAnthropicTool(tool: ToolDefinition): Record<string, unknown> {
  return { name: tool.name, description: tool.description, input_schema: tool.parameters };
}

/** Turns Messages stream events into port events, assembling `tool_use` input per block index. */
class EventAssembler {
  done = false;
  private finishReason: FinishReason | undefined;
  private inputTokens: number | undefined;
  private outputTokens: number | undefined;
  private cachedInputTokens: number | undefined;
  private readonly toolBlocks = new Map<number, { callId: string; name: string; json: string }>();

  accept(payload: string): ModelStreamEvent[] {
    let event: AnthropicEvent;
    try {
      event = JSON.parse(payload) as AnthropicEvent;
    } catch (error) {
      throw new ModelFailure('unavailable', 'The model provider sent a malformed stream event.', { cause: error });
    }
    switch (event.type) {
      case 'message_start':
        this.readUsage(event.message?.usage);
        return [];
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'tool_use') {
          this.toolBlocks.set(event.index ?? 0, { callId: block.id ?? '', name: block.name ?? '', json: '' });
        } else if (block?.type === 'text' && block.text) {
          return [{ type: 'text', text: block.text }];
        }
        return [];
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && delta.text) return [{ type: 'text', text: delta.text }];
        if (delta?.type === 'input_json_delta' && delta.partial_json) {
          const block = this.toolBlocks.get(event.index ?? 0);
          if (block) block.json += delta.partial_json;
        }
        // thinking_delta, signature_delta and other block kinds carry nothing for the port.
        return [];
      }
      case 'content_block_stop': {
        const index = event.index ?? 0;
        const block = this.toolBlocks.get(index);
        if (!block) return [];
        this.toolBlocks.delete(index);
        return [{ type: 'tool-call', callId: block.callId || `toolu_${index}`, name: block.name, arguments: block.json || '{}' }];
      }
      case 'message_delta':
        if (event.delta?.stop_reason) this.finishReason = toFinishReason(event.delta.stop_reason);
        this.readUsage(event.usage);
        return [];
      case 'message_stop':
        this.done = true;
        return this.ending(this.finishReason ?? 'stop');
      case 'error':
        throw streamFailure(event.error);
      default:
        // `ping` and event types added later by the API.
        return [];
    }
  }

  /** The body ended without `message_stop`: complete only if a stop reason was already seen. */
  end(): ModelStreamEvent[] | undefined {
    if (this.finishReason === undefined) return undefined;
    this.done = true;
    return this.ending(this.finishReason);
  }

  private ending(reason: FinishReason): ModelStreamEvent[] {
    const events: ModelStreamEvent[] = [];
    // Usage only as the stream reported it: an unknown count is never sent as 0.
    if (this.inputTokens !== undefined && this.outputTokens !== undefined) {
      const cached = this.cachedInputTokens === undefined ? {} : { cachedInputTokens: this.cachedInputTokens };
      events.push({ type: 'usage', inputTokens: this.inputTokens, outputTokens: this.outputTokens, ...cached });
    }
    events.push({ type: 'finish', reason });
    return events;
  }

  /** Counts are cumulative; cache writes and reads are input tokens the request was billed for. */
  private readUsage(usage: AnthropicUsage | undefined): void {
    if (!usage) return;
    if (typeof usage.input_tokens === 'number') {
      this.inputTokens = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
      // Cache reads are the cached part of the input (priced apart); cache writes are billed as input.
      if (typeof usage.cache_read_input_tokens === 'number') this.cachedInputTokens = usage.cache_read_input_tokens;
    }
    if (typeof usage.output_tokens === 'number') this.outputTokens = usage.output_tokens;
  }
}

function toFinishReason(reason: string): FinishReason {
  switch (reason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
      return 'length';
    default:
      // end_turn, stop_sequence, pause_turn, refusal.
      return 'stop';
  }
}

/** An `error` event inside a 200 stream. */
function streamFailure(error: AnthropicError | undefined): ModelFailure {
  const message = `Model provider stream error: ${error?.message ?? 'no details'}`;
  // What is safe to show of the answer (decision 082); the message above stays sealed.
  const detail = providerErrorDetail(null, error?.type, error?.message);
  switch (error?.type) {
    case 'overloaded_error':
    case 'api_error':
      return new ModelFailure('unavailable', message, { detail });
    case 'rate_limit_error':
      return new ModelFailure('rate-limited', message, { detail });
    default:
      if (CONTEXT_TOO_LONG.test(error?.message ?? '')) return new ModelFailure('context-too-long', message, { detail });
      return new ModelFailure('invalid-request', message, { detail });
  }
}

async function httpFailure(response: Response, limitBytes: number): Promise<ModelFailure> {
  const error = await errorOfBody<AnthropicError>(response, limitBytes);
  const status = response.status;
  const message = `Model provider error ${status}: ${error?.message ?? 'no details'}`;
  const detail = providerErrorDetail(status, error?.type, error?.message);
  if (status === 429) {
    return new ModelFailure('rate-limited', message, { status, retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')), detail });
  }
  if (status === 408) return new ModelFailure('timeout', message, { status, detail });
  // 529 is Anthropic's "overloaded".
  if (status >= 500) return new ModelFailure('unavailable', message, { status, detail });
  if (CONTEXT_TOO_LONG.test(error?.message ?? '')) return new ModelFailure('context-too-long', message, { status, detail });
  return new ModelFailure('invalid-request', message, { status, detail });
}
