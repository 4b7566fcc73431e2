import { get as httpGet, type IncomingHttpHeaders } from 'node:http';

/** One Server-Sent Events response read incrementally over a real socket. */
export interface OpenSse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Every byte received so far, as text. */
  text(): string;
  /** Resolves once the text received contains `needle` (or rejects if the response ends first). */
  waitFor(needle: string): Promise<void>;
  /** Resolves when the server has ended the response. */
  readonly ended: Promise<void>;
  /** Closes the connection from the client's side. */
  close(): void;
}

/** GETs `path` with `Accept: text/event-stream` and answers once the status line arrived. */
export function openSse(port: number, path: string, headers: Record<string, string>): Promise<OpenSse> {
  return new Promise((resolve, reject) => {
    const request = httpGet({ host: '127.0.0.1', port, path, agent: false, headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      response.setEncoding('utf8');
      let text = '';
      let done = false;
      const waiters: Array<() => void> = [];
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => (endedResolve = r));
      const wake = (): void => {
        for (const waiter of waiters.splice(0)) waiter();
      };
      response.on('data', (chunk: string) => {
        text += chunk;
        wake();
      });
      const finish = (): void => {
        done = true;
        endedResolve();
        wake();
      };
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        text: () => text,
        ended,
        close: () => request.destroy(),
        waitFor: (needle) =>
          new Promise<void>((ok, fail) => {
            const check = (): void => {
              if (text.includes(needle)) ok();
              else if (done) fail(new Error(`the response ended without ${JSON.stringify(needle)}; got: ${text.slice(0, 500)}`));
              else waiters.push(check);
            };
            check();
          }),
      });
    });
    request.on('error', reject);
  });
}
