import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The machinery the scripted fakes share (the OpenAI-compatible and Anthropic model servers, the
 * HTTP tool server): a real HTTP server on 127.0.0.1 (any free port) that records every request
 * (method, path, headers, parsed body) and answers each one with the next scripted reply, or the
 * `fallback` reply once the script is empty, or the fake's own "no scripted reply" answer when
 * there is neither. Each fake extends `ScriptedServer` and adds its wire format's reply helpers.
 */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The body as the fake's `parseBody` read it (undefined when empty). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire body, asserted field by field
  readonly body: any;
}

export type Reply = (res: ServerResponse) => void | Promise<void>;

export interface ScriptedServerOptions {
  /** Names the fake in `waitForRequests` timeouts. */
  readonly name: string;
  /** Appended to `http://127.0.0.1:<port>` to make `baseUrl` (e.g. `/v1`; '' for the bare origin). */
  readonly baseUrlSuffix: string;
  /** Reads the raw request text into `RecordedRequest.body`. */
  readonly parseBody: (raw: string) => unknown;
  /** Answers a request when the script is empty and there is no `fallback`. */
  readonly unscripted: Reply;
}

/** A strict JSON body: undefined when empty (invalid JSON fails the request, unanswered). */
export function jsonBody(raw: string): unknown {
  return raw ? JSON.parse(raw) : undefined;
}

/** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
export function jsonOrTextBody(raw: string): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Where a fake listens. */
export interface ListenAt {
  readonly host?: string;
  readonly port?: number;
}

export class ScriptedServer {
  readonly requests: RecordedRequest[] = [];
  /** Served when the script is empty (instead of the "no scripted reply" answer): unlimited requests. */
  fallback?: Reply;
  private readonly script: Reply[] = [];
  private readonly waiters = new Set<() => void>();
  private host = '127.0.0.1';

  private readonly server: Server = createServer((req, res) => {
    void this.handle(req, res);
  });

  protected constructor(private readonly options: ScriptedServerOptions) {}

  /**
   * Starts listening (default: a free port of 127.0.0.1); a fake's static `start()` returns this.
   * Egress tests pick another loopback address and a given port (a name pinned to that address).
   */
  protected async listen(at: ListenAt = {}): Promise<this> {
    this.host = at.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(at.port ?? 0, this.host, resolve);
    });
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get baseUrl(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}${this.options.baseUrlSuffix}`;
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
        reject(new Error(`${this.options.name}: expected at least ${n} request(s) within ${timeoutMs} ms, received ${this.requests.length}`));
      }, timeoutMs);
      this.waiters.add(wake);
    });
  }

  /** Stops the server, destroying open (also hung) connections. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: this.options.parseBody(raw) });
    for (const wake of [...this.waiters]) wake();
    const reply = this.script.shift() ?? this.fallback ?? this.options.unscripted;
    await reply(res);
  }
}

// ---- stream helpers --------------------------------------------------------------------------

const TICK_MS = 2;
const pause = (ms: number = TICK_MS): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface StreamOptions {
  /** Destroy the socket after this many items (a dropped connection mid-stream). */
  readonly dropAfter?: number;
  /** Stop writing after this many items and never finish (a stall). */
  readonly stallAfter?: number;
  /** Wait this many ms between items (a slow stream) instead of the 2 ms tick. */
  readonly delayMs?: number;
}

export interface EventStreamOptions extends StreamOptions {
  /** Write this many items, then hold the stream open until `release` settles. */
  readonly holdAfter?: number;
  /** Resolving it streams the rest; rejecting it drops the connection. */
  readonly release?: Promise<void>;
  /** Written after the last item, just before the end (e.g. `data: [DONE]`). */
  readonly trailer?: string;
}

/** Writes an SSE response, one already formatted item (`frames[i]`) per write, a tick apart. */
export async function writeEventStream(res: ServerResponse, frames: readonly string[], options: EventStreamOptions = {}): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.flushHeaders();
  for (let i = 0; i < frames.length; i++) {
    if (options.dropAfter === i) {
      await pause(options.delayMs);
      res.socket?.destroy();
      return;
    }
    if (options.stallAfter === i) return;
    if (options.holdAfter === i && !(await held(res, options.release))) return;
    res.write(frames[i]);
    // Separate writes so the client really receives the stream in pieces.
    await pause(options.delayMs);
  }
  if (options.holdAfter === frames.length && !(await held(res, options.release))) return;
  if (options.trailer !== undefined) res.write(options.trailer);
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

/** A reply written as raw text pieces, to split SSE lines and events at arbitrary byte positions. */
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

/** Accepts the request and never answers (until the client gives up or the server closes). */
export function silentReply(): Reply {
  return () => undefined;
}
