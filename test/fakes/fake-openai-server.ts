import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible model server for libs/core tests: a real HTTP server on
 * 127.0.0.1 speaking the chat-completions streaming wire format (SSE `data:` chunks, a usage chunk
 * with empty `choices`, `data: [DONE]`). Each request takes the next scripted reply, or the
 * `fallback` reply once the script is empty.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire body, asserted field by field
  readonly body: any;
}

export type Reply = (res: ServerResponse) => void | Promise<void>;

export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  /** Served when the script is empty (instead of a 500 "no scripted reply"): unlimited requests. */
  fallback?: Reply;
  private readonly script: Reply[] = [];
  private readonly waiters = new Set<() => void>();

  private readonly server: Server = createServer((req, res) => {
    void this.handle(req, res);
  });

  private constructor() {}

  static async start(): Promise<FakeOpenAiServer> {
    const fake = new FakeOpenAiServer();
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
    return distinctKeys(this.requests);
  }

  enqueue(...replies: Reply[]): void {
    this.script.push(...replies);
  }

  /** Resolves once at least `n` requests were received; rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
    return waitForCount(this.waiters, () => this.requests.length, n, timeoutMs, 'FakeOpenAiServer');
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
      res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'no scripted reply' } }));
      return;
    }
    await reply(res);
  }
}

function distinctKeys(requests: readonly RecordedRequest[]): string[] {
  const seen = new Set<string>();
  for (const request of requests) {
    const key = request.headers['idempotency-key'];
    for (const value of Array.isArray(key) ? key : key === undefined ? [] : [key]) seen.add(value);
  }
  return [...seen];
}

/** Event-based wait: `wake` callbacks are run by the server after each recorded request. */
function waitForCount(waiters: Set<() => void>, count: () => number, n: number, timeoutMs: number, name: string): Promise<void> {
  if (count() >= n) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const wake = (): void => {
      if (count() < n) return;
      clearTimeout(timer);
      waiters.delete(wake);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(wake);
      reject(new Error(`${name}: expected at least ${n} request(s) within ${timeoutMs} ms, received ${count()}`));
    }, timeoutMs);
    waiters.add(wake);
  });
}

const TICK_MS = 2;
const pause = (ms: number = TICK_MS): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- chunk builders (the OpenAI `chat.completion.chunk` shape) -------------------------------

type Chunk = Record<string, unknown>;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Chunk {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

export const chunks = {
  role: (): Chunk => chunk({ role: 'assistant', content: '' }),
  text: (text: string): Chunk => chunk({ content: text }),
  /** The first fragment of a tool call carries id and name; later ones only argument text. */
  toolCallStart: (index: number, id: string, name: string): Chunk =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
  toolCallArgs: (index: number, fragment: string): Chunk => chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
  finish: (reason: 'stop' | 'tool_calls' | 'length'): Chunk => chunk({}, reason),
  usage: (promptTokens: number, completionTokens: number): Chunk => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  }),
};

// ---- replies ---------------------------------------------------------------------------------

export interface StreamOptions {
  /** Destroy the socket after this many chunks (a dropped connection mid-stream). */
  readonly dropAfter?: number;
  /** Stop writing after this many chunks and never finish (a stall). */
  readonly stallAfter?: number;
  /** Leave out the final `data: [DONE]`. */
  readonly noDone?: boolean;
  /** Wait this many ms between chunks (a slow stream) instead of the 2 ms tick. */
  readonly delayMs?: number;
}

export interface HeldStreamOptions extends StreamOptions {
  /** Write this many chunks, then hold the stream open until `release` settles. */
  readonly holdAfter: number;
  /** Resolving it streams the rest; rejecting it drops the connection. */
  readonly release: Promise<void>;
}

export function streamReply(items: readonly Chunk[], options: StreamOptions = {}): Reply {
  return (res) => writeStream(res, items, options);
}

/**
 * Streams the chunks before index `holdAfter`, then waits for `release` before streaming the rest
 * (holds a stream open mid-way, e.g. while a test kills the process consuming it).
 */
export function heldStreamReply(items: readonly Chunk[], options: HeldStreamOptions): Reply {
  return (res) => writeStream(res, items, options);
}

async function writeStream(res: ServerResponse, items: readonly Chunk[], options: StreamOptions & Partial<HeldStreamOptions>): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  for (let i = 0; i < items.length; i++) {
    if (options.dropAfter === i) {
      await pause(options.delayMs);
      res.socket?.destroy();
      return;
    }
    if (options.stallAfter === i) return;
    if (options.holdAfter === i && !(await held(res, options.release))) return;
    res.write(`data: ${JSON.stringify(items[i])}\n\n`);
    // Separate writes so the client really receives the stream in pieces.
    await pause(options.delayMs);
  }
  if (options.holdAfter === items.length && !(await held(res, options.release))) return;
  if (!options.noDone) res.write('data: [DONE]\n\n');
  res.end();
}

/** Waits for `release`; false (after dropping the connection on rejection) when the stream must stop. */
async function held(res: ServerResponse, release: Promise<void> | undefined): Promise<boolean> {
  const released = await (release ?? Promise.resolve()).then(
    () => true,
    () => false,
  );
  if (!released) res.socket?.destroy();
  return released && !res.destroyed;
}

/** A reply written as raw text pieces, to split SSE lines at arbitrary byte positions. */
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

/** A complete text answer streamed in the given parts. */
export function textReply(parts: readonly string[], usage?: readonly [number, number], options: StreamOptions = {}): Reply {
  return streamReply(
    [chunks.role(), ...parts.map(chunks.text), chunks.finish('stop'), ...(usage ? [chunks.usage(usage[0], usage[1])] : [])],
    options,
  );
}

/** One tool call whose JSON arguments are split into fragments across chunks. */
export function toolCallReply(
  id: string,
  name: string,
  argumentFragments: readonly string[],
  usage?: readonly [number, number],
  options: StreamOptions = {},
): Reply {
  return streamReply(
    [
      chunks.role(),
      chunks.toolCallStart(0, id, name),
      ...argumentFragments.map((fragment) => chunks.toolCallArgs(0, fragment)),
      chunks.finish('tool_calls'),
      ...(usage ? [chunks.usage(usage[0], usage[1])] : []),
    ],
    options,
  );
}

export function statusReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
}

/** Accepts the request and never answers. */
export function silentReply(): Reply {
  return () => undefined;
}
