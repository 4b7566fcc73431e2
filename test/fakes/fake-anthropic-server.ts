import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted Anthropic Messages API server for libs/core tests: a real HTTP server on 127.0.0.1
 * speaking the Messages streaming wire format (SSE with `event:` and `data:` lines: message_start,
 * content_block_start/delta/stop, message_delta, message_stop, ping, error). Each request takes
 * the next scripted reply, or the `fallback` reply once the script is empty.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire body, asserted field by field
  readonly body: any;
}

export type Reply = (res: ServerResponse) => void | Promise<void>;

export class FakeAnthropicServer {
  readonly requests: RecordedRequest[] = [];
  /** Served when the script is empty (instead of a 500 "no scripted reply"): unlimited requests. */
  fallback?: Reply;
  private readonly script: Reply[] = [];
  private readonly waiters = new Set<() => void>();

  private readonly server: Server = createServer((req, res) => {
    void this.handle(req, res);
  });

  private constructor() {}

  static async start(): Promise<FakeAnthropicServer> {
    const fake = new FakeAnthropicServer();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Requests seen per `Idempotency-Key` header. */
  countByKey(key: string): number {
    return this.requests.filter((request) => request.headers['idempotency-key'] === key).length;
  }

  /** The distinct `Idempotency-Key` headers seen, in first-seen order. */
  keys(): string[] {
    const seen = new Set<string>();
    for (const request of this.requests) {
      const key = request.headers['idempotency-key'];
      for (const value of Array.isArray(key) ? key : key === undefined ? [] : [key]) seen.add(value);
    }
    return [...seen];
  }

  enqueue(...replies: Reply[]): void {
    this.script.push(...replies);
  }

  /** Resolves once at least `n` requests were received (event based); rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        if (this.requests.length < n) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`FakeAnthropicServer: expected at least ${n} request(s) within ${timeoutMs} ms, received ${this.requests.length}`));
      }, timeoutMs);
      this.waiters.add(wake);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
    for (const wake of [...this.waiters]) wake();
    const reply = this.script.shift() ?? this.fallback;
    if (!reply) {
      res
        .writeHead(500, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no scripted reply' } }));
      return;
    }
    await reply(res);
  }
}

const TICK_MS = 2;
const pause = (ms: number = TICK_MS): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- event builders (the Messages API stream shape) -------------------------------------------

export interface StreamEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

export const events = {
  messageStart: (inputTokens?: number): StreamEvent => ({
    type: 'message_start',
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(inputTokens === undefined ? {} : { usage: { input_tokens: inputTokens, output_tokens: 1 } }),
    },
  }),
  textStart: (index: number): StreamEvent => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  text: (index: number, text: string): StreamEvent => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  toolStart: (index: number, id: string, name: string): StreamEvent => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name, input: {} },
  }),
  toolJson: (index: number, partialJson: string): StreamEvent => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  }),
  blockStop: (index: number): StreamEvent => ({ type: 'content_block_stop', index }),
  messageDelta: (stopReason: string, outputTokens?: number): StreamEvent => ({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    ...(outputTokens === undefined ? {} : { usage: { output_tokens: outputTokens } }),
  }),
  messageStop: (): StreamEvent => ({ type: 'message_stop' }),
  ping: (): StreamEvent => ({ type: 'ping' }),
  error: (type: string, message: string): StreamEvent => ({ type: 'error', error: { type, message } }),
};

/** One SSE event exactly as the API writes it. */
export function sse(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

// ---- replies ---------------------------------------------------------------------------------

export interface StreamOptions {
  /** Destroy the socket after this many events (a dropped connection mid-stream). */
  readonly dropAfter?: number;
  /** Stop writing after this many events and never finish (a stall). */
  readonly stallAfter?: number;
  /** Wait this many ms between events (a slow stream) instead of the 2 ms tick. */
  readonly delayMs?: number;
}

export function streamReply(items: readonly StreamEvent[], options: StreamOptions = {}): Reply {
  return async (res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    for (let i = 0; i < items.length; i++) {
      if (options.dropAfter === i) {
        await pause(options.delayMs);
        res.socket?.destroy();
        return;
      }
      if (options.stallAfter === i) return;
      res.write(sse(items[i]));
      // Separate writes so the client really receives the stream in pieces.
      await pause(options.delayMs);
    }
    res.end();
  };
}

/** A reply written as raw text pieces, to split SSE events at arbitrary byte positions. */
export function rawReply(pieces: readonly string[]): Reply {
  return async (res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    for (const piece of pieces) {
      res.write(piece);
      await pause();
    }
    res.end();
  };
}

/** A complete text answer streamed in the given parts, with usage when given. */
export function textReply(parts: readonly string[], usage?: readonly [number, number], options: StreamOptions = {}): Reply {
  return streamReply(
    [
      events.messageStart(usage?.[0]),
      events.textStart(0),
      events.ping(),
      ...parts.map((part) => events.text(0, part)),
      events.blockStop(0),
      events.messageDelta('end_turn', usage?.[1]),
      events.messageStop(),
    ],
    options,
  );
}

/** One tool_use block whose JSON input is split into fragments across events. */
export function toolUseReply(
  id: string,
  name: string,
  jsonFragments: readonly string[],
  usage?: readonly [number, number],
  options: StreamOptions = {},
): Reply {
  return streamReply(
    [
      events.messageStart(usage?.[0]),
      events.toolStart(0, id, name),
      ...jsonFragments.map((fragment) => events.toolJson(0, fragment)),
      events.blockStop(0),
      events.messageDelta('tool_use', usage?.[1]),
      events.messageStop(),
    ],
    options,
  );
}

/** An HTTP error in the Messages API error shape. */
export function statusReply(status: number, errorType: string, message: string, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify({ type: 'error', error: { type: errorType, message } }));
  };
}

/** Accepts the request and never answers. */
export function silentReply(): Reply {
  return () => undefined;
}
