import { answerAsResponse, undiciPost, type PostAnswer, type StreamingPost } from '../http/streaming-post';
import { ModelFailure, type ModelRequest, type ModelStreamEvent } from '../model/model-provider';
import { BodyChunks } from '../http/body-chunks';
import { AnswerTooLarge, DEFAULT_ERROR_BODY_LIMIT, readCappedText } from '../http/capped-body';
import type { ReadPacer } from '../http/read-pacer';
import { SseDecoder, SseTooLarge } from './sse';
import { Watchdog } from './watchdog';

/** Turns one provider's SSE payloads into port events. */
export interface StreamAssembler {
  /** True once the provider said the stream is complete. */
  readonly done: boolean;
  accept(payload: string): ModelStreamEvent[];
  /** The events owed when the body ends without an explicit end; undefined when it ended too early. */
  end(): ModelStreamEvent[] | undefined;
}

export interface SseRequest {
  readonly post: StreamingPost;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly firstByteTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** The provider's mapping of a non-2xx answer to a categorised failure. */
  readonly httpFailure: (response: Response) => Promise<ModelFailure>;
  readonly assembler: StreamAssembler;
  /** Paces the reads once the first event went out (decision 063); none: every chunk is read as it comes. */
  readonly pacer?: ReadPacer | undefined;
}

/** How an adapter reaches its provider's streaming endpoint: the options every adapter takes. */
export interface SseEndpointOptions {
  /** E.g. `https://api.anthropic.com/v1`; the adapter appends its own path. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** Time allowed until the first byte of the response body. */
  readonly firstByteTimeoutMs?: number;
  /** Time allowed between two body chunks once streaming has started. */
  readonly idleTimeoutMs?: number;
  /** The HTTP client (the egress client's in the product); default: undici's global dispatcher. */
  readonly post?: StreamingPost;
  /** Largest error body read from the provider (default 64 KiB); a larger one is not read. */
  readonly maxErrorBodyBytes?: number;
  /** The node's pacer of model-stream reads (decision 063); none: every chunk is read as it comes. */
  readonly pacer?: ReadPacer | undefined;
}

/** What one adapter adds to a streaming request: its headers, body, failure mapping and assembler. */
export interface SseCall {
  readonly headers: Record<string, string>;
  readonly body: unknown;
  /** The provider's mapping of a non-2xx answer (its body read up to `limitBytes`) to a categorised failure. */
  readonly httpFailure: (response: Response, limitBytes: number) => Promise<ModelFailure>;
  readonly assembler: StreamAssembler;
}

const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** A provider's streaming endpoint with the shared defaults applied; each adapter holds one. */
export class SseEndpoint {
  private readonly url: string;
  private readonly post: StreamingPost;
  private readonly firstByteTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly maxErrorBodyBytes: number;

  /** `path`: what the adapter appends to the base URL (`/messages`, `/chat/completions`). */
  constructor(
    private readonly options: SseEndpointOptions,
    path: string,
  ) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}${path}`;
    this.post = options.post ?? undiciPost();
    this.firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxErrorBodyBytes = options.maxErrorBodyBytes ?? DEFAULT_ERROR_BODY_LIMIT;
  }

  stream(request: ModelRequest, call: SseCall): AsyncGenerator<ModelStreamEvent> {
    return streamSse(request, {
      post: this.post,
      url: this.url,
      headers: call.headers,
      body: call.body,
      firstByteTimeoutMs: this.firstByteTimeoutMs,
      idleTimeoutMs: this.idleTimeoutMs,
      httpFailure: (response) => call.httpFailure(response, this.maxErrorBodyBytes),
      assembler: call.assembler,
      pacer: this.options.pacer,
    });
  }
}

/**
 * The `error` object of a provider's error body, read up to `limitBytes`: the body's text as its
 * message when it is not JSON, or a note that it was too large (the status alone still classifies
 * the failure).
 */
export async function errorOfBody<E extends { message?: string }>(response: Response, limitBytes: number): Promise<E | undefined> {
  let text = '';
  try {
    text = await readCappedText(response, limitBytes, 'the error body');
  } catch (error) {
    if (error instanceof AnswerTooLarge) text = error.message;
  }
  try {
    return (JSON.parse(text) as { error?: E }).error;
  } catch {
    return { message: text } as E;
  }
}

/** `Retry-After` is either delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed));
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** The abort reason that releases a model stream's connection once its consumer is done with it. */
const STREAM_OVER = Symbol('model stream over');

/**
 * One streaming POST to a model provider, shared by the adapters: a first-byte and an idle
 * timeout, the caller's cancel passed through unchanged, every other fault a `ModelFailure`,
 * and the connection released when the consumer stops early.
 */
export async function* streamSse(request: ModelRequest, http: SseRequest): AsyncGenerator<ModelStreamEvent> {
  const controller = new AbortController();
  const watchdog = new Watchdog(controller);
  const onCallerAbort = (): void => controller.abort(request.signal?.reason);
  if (request.signal?.aborted) throw request.signal.reason;
  request.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const failure = (error: unknown): unknown => {
    if (error instanceof ModelFailure) return error;
    if (watchdog.fired) return new ModelFailure('timeout', 'The model provider did not answer in time.', { cause: error });
    // The caller cancelled: that is not a provider failure, pass the caller's reason through.
    if (request.signal?.aborted) return request.signal.reason;
    return new ModelFailure('unavailable', 'The model provider connection failed.', { cause: error });
  };

  let chunks: BodyChunks | undefined;
  try {
    watchdog.arm(http.firstByteTimeoutMs);
    let answer: PostAnswer;
    try {
      answer = await http.post(http.url, { headers: http.headers, body: JSON.stringify(http.body), signal: controller.signal });
      if (answer.status < 200 || answer.status > 299) throw await http.httpFailure(answerAsResponse(answer));
    } catch (error) {
      throw failure(error);
    }

    chunks = new BodyChunks(answer.body, http.pacer);
    const decoder = new TextDecoder();
    const sse = new SseDecoder();
    const assembler = http.assembler;
    let first = true;
    for (;;) {
      if (!first) watchdog.arm(http.idleTimeoutMs);
      let read: Uint8Array | null;
      try {
        read = await chunks.next();
      } catch (error) {
        throw failure(error);
      }
      watchdog.disarm();
      first = false;
      let payloads: string[];
      try {
        payloads = read === null ? sse.end() : sse.push(decoder.decode(read, { stream: true }));
      } catch (error) {
        if (error instanceof SseTooLarge) throw new ModelFailure('unavailable', `The model provider stream is unusable: ${error.message}.`, { cause: error });
        throw error;
      }
      for (const payload of payloads) {
        for (const event of assembler.accept(payload)) {
          yield event;
          // The first event never waits for the pacer; later reads may.
          chunks.pace();
        }
        if (assembler.done) return;
      }
      if (read === null) {
        const ending = assembler.end();
        if (!ending) throw new ModelFailure('unavailable', 'The model stream ended before it was complete.');
        for (const event of ending) yield event;
        return;
      }
    }
  } finally {
    watchdog.stop();
    request.signal?.removeEventListener('abort', onCallerAbort);
    // Releases the connection when the consumer stops early or the stream failed (a constant
    // reason: a bare abort() builds a DOMException with its stack on every stream).
    controller.abort(STREAM_OVER);
    chunks?.close();
  }
}
