import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted stand-in for an organization's HTTP tool endpoint: a real HTTP server on 127.0.0.1
 * (any free port). It records every request (method, path, headers, parsed JSON body), counts
 * requests per `Idempotency-Key` header, and answers each request with the next scripted reply,
 * or the `fallback` reply once the script is empty (a 500 when there is neither).
 */
export interface RecordedToolRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the wire body, asserted field by field
  readonly body: any;
}

export type Reply = (res: ServerResponse) => void | Promise<void>;

export class FakeToolServer {
  readonly requests: RecordedToolRequest[] = [];
  /** Served when the script is empty (instead of a 500 "no scripted reply"): unlimited requests. */
  fallback?: Reply;
  private readonly script: Reply[] = [];
  private readonly waiters = new Set<() => void>();

  private readonly server: Server = createServer((req, res) => {
    void this.handle(req, res);
  });

  private constructor() {}

  static async start(): Promise<FakeToolServer> {
    const fake = new FakeToolServer();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The absolute URL of `path` on this server. */
  url(path = '/tool'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path.startsWith('/') ? path : `/${path}`}`;
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
        reject(new Error(`FakeToolServer: expected at least ${n} request(s) within ${timeoutMs} ms, received ${this.requests.length}`));
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
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: parseBody(raw) });
    for (const wake of [...this.waiters]) wake();
    const reply = this.script.shift() ?? this.fallback;
    if (!reply) {
      writeJson(res, 500, { error: 'no scripted reply' });
      return;
    }
    await reply(res);
  }
}

function parseBody(raw: string): unknown {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

// ---- replies ---------------------------------------------------------------------------------

function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** Answers at once with a JSON body. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => writeJson(res, status, body, headers);
}

/** Accepts the request and never answers (until the client gives up or the server closes). */
export function hangReply(): Reply {
  return () => undefined;
}

/** Destroys the socket without an answer (a dropped connection). */
export function dropReply(): Reply {
  return (res) => {
    res.socket?.destroy();
  };
}

/** Answers with a JSON body after `ms`; nothing is written if the connection closed meanwhile. */
export function delayedJsonReply(ms: number, status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) =>
    new Promise<void>((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        res.off('close', onClose);
        writeJson(res, status, body, headers);
        resolve();
      }, ms);
      res.once('close', onClose);
    });
}
