import type { OpenbotClient } from './client';
import { OpenbotApiError, OpenbotConnectionError, faultError, toApiError, type RequestFailed } from './errors';
import { SseParser, type SseMessage } from './sse';

/**
 * One event of an execution (docs/http-api.md "Executions and events"): `seq` starts at 1 and rises by exactly 1,
 * `type` names it (`model.started`, `text.delta`, `execution.ended`…), and each type adds its own fields.
 */
export interface ExecutionEvent {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly step?: number;
  readonly attempt?: number;
  readonly [field: string]: unknown;
}

/**
 * A server fault after the stream had started (the SSE `error` event, ERR-03). The server closes
 * the stream after it; `streamEvents` yields it and then resumes from the last event it saw.
 */
export interface StreamFault {
  readonly seq: null;
  readonly type: 'error';
  readonly error: RequestFailed;
}

export type StreamItem = ExecutionEvent | StreamFault;

export interface ReconnectInfo {
  /** Consecutive failed attempts so far (1 on the first reconnect after a drop). */
  readonly attempt: number;
  /** The last `seq` seen: the stream resumes with `Last-Event-ID: <after>`. */
  readonly after: number;
  readonly delayMs: number;
  readonly error: unknown;
}

export interface StreamEventsOptions {
  /** Start after this sequence number (default 0: from the first event). */
  readonly after?: number;
  /** Stops the stream (the iteration throws the signal's reason). Closing a stream never cancels the execution. */
  readonly signal?: AbortSignal;
  /** Consecutive failed connections (without a new event in between) before giving up; default 8. */
  readonly maxRetries?: number;
  /** First reconnect delay, doubled per consecutive failure up to `maxDelayMs`; defaults 250 and 5000. */
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /** A connection silent this long is presumed dead and replaced; the server comments every 15 s. Default 45000. */
  readonly idleTimeoutMs?: number;
  /** Called before each reconnect (e.g. to tell a user the stream is catching up). */
  readonly onReconnect?: (info: ReconnectInfo) => void;
}

const DEFAULTS = { maxRetries: 8, minDelayMs: 250, maxDelayMs: 5_000, idleTimeoutMs: 45_000 };
/** A `Retry-After` longer than this is not waited for in full: the stream's bounds stay bounded. */
const MAX_RETRY_AFTER_MS = 30_000;

/**
 * The events of one execution as Server-Sent Events, ending after `execution.ended`. A dropped or
 * silent connection, a 5xx and an SSE `error` event are retried with bounded exponential backoff,
 * resuming with `Last-Event-ID` set to the last `seq` seen, so the sequence has no duplicate and
 * no gap. A 4xx answer (unknown execution, revoked key) is thrown as `OpenbotApiError` at once.
 *
 *   for await (const event of streamEvents(client, executionId)) if (event.type === 'text.delta') …
 */
export async function* streamEvents(client: OpenbotClient, executionId: string, options: StreamEventsOptions = {}): AsyncGenerator<StreamItem, void, undefined> {
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  let cursor = options.after ?? 0;
  let failures = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const connection = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, connection.signal]) : connection.signal;
    let failure: unknown;
    try {
      const { data, error, response } = await client.GET('/v1/executions/{id}/events', {
        params: { path: { id: executionId }, ...(cursor > 0 ? { header: { 'Last-Event-ID': String(cursor) } } : {}) },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal,
      });
      if (!response.ok || !data) {
        failure = toApiError(response, error);
      } else {
        for await (const message of messagesOf(data, connection, settings.idleTimeoutMs)) {
          if (message.event === 'error') {
            const fault = parseFault(message.data);
            yield { seq: null, type: 'error', error: fault };
            failure = faultError(fault);
            break;
          }
          const event = parseEvent(message);
          // A resumed stream starts after the cursor; anything at or before it is a repeat.
          if (event.seq <= cursor) continue;
          cursor = event.seq;
          failures = 0;
          yield event;
          if (event.type === 'execution.ended') return;
        }
        failure ??= new OpenbotConnectionError(client.baseUrl, { cause: new Error('the event stream closed before execution.ended') });
      }
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      failure = error;
    } finally {
      connection.abort();
    }
    if (failure instanceof OpenbotApiError && !retryable(failure)) throw failure;
    failures += 1;
    if (failures > settings.maxRetries) throw failure;
    const delayMs = backoff(failures, settings, failure);
    options.onReconnect?.({ attempt: failures, after: cursor, delayMs, error: failure });
    await sleep(delayMs, options.signal);
  }
}

/** Decoded SSE messages of a response body; a connection silent for `idleMs` is aborted. */
async function* messagesOf(body: ReadableStream<Uint8Array>, connection: AbortController, idleMs: number): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let idle = setTimeout(() => connection.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      clearTimeout(idle);
      if (done) return;
      idle = setTimeout(() => connection.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    clearTimeout(idle);
    await reader.cancel().catch(() => undefined);
  }
}

function parseEvent(message: SseMessage): ExecutionEvent {
  const event = JSON.parse(message.data) as Partial<ExecutionEvent> | null;
  if (typeof event !== 'object' || event === null || typeof event.type !== 'string') {
    throw new Error(`malformed execution event: ${message.data.slice(0, 200)}`);
  }
  const seq = typeof event.seq === 'number' ? event.seq : Number(message.id);
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`execution event without a sequence number: ${message.data.slice(0, 200)}`);
  return { ...event, seq } as ExecutionEvent;
}

function parseFault(data: string): RequestFailed {
  try {
    const body = JSON.parse(data) as Partial<RequestFailed>;
    return { type: 'RequestFailed', category: body.category ?? 'internal', errorId: body.errorId ?? '' };
  } catch {
    return { type: 'RequestFailed', category: 'internal', errorId: '' };
  }
}

/** 408, 425, 429 and every 5xx may pass; any other 4xx will answer the same again. */
function retryable(error: OpenbotApiError): boolean {
  return error.status >= 500 || error.status === 408 || error.status === 425 || error.status === 429;
}

function backoff(failures: number, settings: typeof DEFAULTS, failure: unknown): number {
  const exponential = Math.min(settings.maxDelayMs, settings.minDelayMs * 2 ** (failures - 1));
  const retryAfter = failure instanceof OpenbotApiError && failure.retryAfterSeconds !== undefined ? Math.min(failure.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS) : 0;
  return Math.max(exponential, retryAfter);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

function definedOnly(options: StreamEventsOptions): Partial<typeof DEFAULTS> {
  const picked: Partial<typeof DEFAULTS> = {};
  if (options.maxRetries !== undefined) picked.maxRetries = options.maxRetries;
  if (options.minDelayMs !== undefined) picked.minDelayMs = options.minDelayMs;
  if (options.maxDelayMs !== undefined) picked.maxDelayMs = options.maxDelayMs;
  if (options.idleTimeoutMs !== undefined) picked.idleTimeoutMs = options.idleTimeoutMs;
  return picked;
}
