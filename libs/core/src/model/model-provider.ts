import type { ChatMessage, ToolDefinition } from './chat';
import type { ProviderErrorDetail } from './provider-error';

/**
 * The model port: every provider adapter (openai-compatible, anthropic, test fakes) implements it.
 * A provider turns one request into one stream of events; it never retries on its own — retry
 * policy (and the attempt numbering CALL-04 needs) belongs to the caller.
 */
export interface ModelRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDefinition[];
  /** Sent to the provider so a repeated request can be recognised (the same key on every retry). */
  readonly idempotencyKey?: string;
  /** The most output tokens the answer may have (`max_tokens`): what bounds a reservation (USE-02). */
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length';

export type ModelStreamEvent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool-call'; readonly callId: string; readonly name: string; readonly arguments: string }
  | { readonly type: 'usage'; readonly inputTokens: number; readonly outputTokens: number; readonly cachedInputTokens?: number }
  | { readonly type: 'finish'; readonly reason: FinishReason };

export interface ModelProvider {
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

export type ModelFailureCategory = 'rate-limited' | 'unavailable' | 'invalid-request' | 'context-too-long' | 'timeout';

const SAFE_TO_RETRY: ReadonlySet<ModelFailureCategory> = new Set(['rate-limited', 'unavailable', 'timeout']);

/**
 * A provider call failed; `category` is the only detail callers branch on. Its message may quote
 * the provider's whole answer and stays in the sealed error record; `detail` is the part safe to
 * show (decision 082), set when the provider itself answered with an error.
 */
export class ModelFailure extends Error {
  override readonly name = 'ModelFailure';

  constructor(
    readonly category: ModelFailureCategory,
    message: string,
    readonly options: { readonly retryAfterSeconds?: number; readonly status?: number; readonly cause?: unknown; readonly detail?: ProviderErrorDetail } = {},
  ) {
    super(message, { cause: options.cause });
  }

  /** What the provider answered, scrubbed and bounded (status, its error code, its message's first line); undefined when it did not answer. */
  get detail(): ProviderErrorDetail | undefined {
    return this.options.detail;
  }

  /** The category an execution that fails of it ends with (the engine reads `failureCategory` on a failure and its causes). */
  get failureCategory(): ModelFailureCategory {
    return this.category;
  }

  /** The safe detail an execution that fails of it shows (the engine reads `failureDetail`, decision 082). */
  get failureDetail(): ProviderErrorDetail | undefined {
    return this.options.detail;
  }

  get retryAfterSeconds(): number | undefined {
    return this.options.retryAfterSeconds;
  }

  /** Repeating the same request may succeed: rate limits, outages and timeouts. */
  get safeToRetry(): boolean {
    return SAFE_TO_RETRY.has(this.category);
  }
}

export function isModelFailure(error: unknown): error is ModelFailure {
  return error instanceof ModelFailure;
}
