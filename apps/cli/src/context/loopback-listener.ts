import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the authorization server's answer carried, as it reached the listener. */
export interface LoopbackAnswer {
  readonly state: string;
  readonly code?: string;
  readonly iss?: string;
  readonly error?: string;
}

/** The listener stopped waiting because the sign-in ended otherwise (its `answer` signal aborted). */
export class ListenerAbandoned extends Error {
  override readonly name = 'ListenerAbandoned';
}

const PATH = '/callback';
const DONE_PAGE = '<!doctype html><meta charset="utf-8"><title>OpenBot</title><p>The answer reached the openbot CLI. You can close this window and return to the terminal.</p>';

/**
 * A one-shot loopback listener for an App sign-in (RFC 8252, decision 066): on 127.0.0.1 only,
 * on a port the system picks (or the one given). OpenBot's callback relays the authorization
 * server's answer here; the CLI then posts it with the member's own key, so a link forwarded to
 * someone else never completes anything. Requests to other paths, or with another state, are
 * answered 404/400 and ignored.
 */
export class LoopbackListener {
  private expected: { state: string; resolve: (answer: LoopbackAnswer) => void } | null = null;

  private constructor(private readonly server: Server) {
    server.on('request', (req, res) => this.handle(req, res));
  }

  static async open(port = 0): Promise<LoopbackListener> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return new LoopbackListener(server);
  }

  /** The redirect to register for the authorization: `http://127.0.0.1:<port>/callback`. */
  get redirect(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${PATH}`;
  }

  /** Waits for the answer that carries `state`, at most `timeoutMs`, or until `signal` aborts (the sign-in is no longer awaited). */
  answer(state: string, timeoutMs: number, signal?: AbortSignal): Promise<LoopbackAnswer> {
    return new Promise<LoopbackAnswer>((resolve, reject) => {
      const stop = (): void => {
        clearTimeout(timer);
        this.expected = null;
        reject(new ListenerAbandoned(`the sign-in awaited at ${this.redirect} is no longer pending`));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', stop);
        reject(new Error(`no answer reached ${this.redirect} within ${Math.round(timeoutMs / 60_000)} minutes`));
      }, timeoutMs);
      if (signal?.aborted) return stop();
      signal?.addEventListener('abort', stop, { once: true });
      this.expected = {
        state,
        resolve: (answer) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', stop);
          resolve(answer);
        },
      };
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== PATH) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    const state = url.searchParams.get('state');
    const expected = this.expected;
    if (expected === null || state !== expected.state) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('This answer is not for the sign-in this CLI is waiting for.');
    this.expected = null;
    const field = (name: string): Record<string, string> => {
      const value = url.searchParams.get(name);
      return value === null ? {} : { [name]: value };
    };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(DONE_PAGE);
    expected.resolve({ state, ...field('code'), ...field('iss'), ...field('error') });
  }
}
