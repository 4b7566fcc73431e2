import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The test TLS fixture: a certificate for `localhost` and `127.0.0.1`, its own CA. */
export const TLS_FIXTURE = join(__dirname, '..', 'fixtures', 'tls');

/**
 * An https front on loopback (the test TLS fixture) that passes every request on to a plain
 * http origin, as a TLS-terminating proxy does in front of OpenBot in production. Its URL is
 * known before the origin listens (`OPENBOT_PUBLIC_URL` needs it at boot): set the origin later.
 */
export interface TlsFront {
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  /** Method and path of every request passed on, in order. */
  readonly requests: string[];
  forwardTo(origin: string): void;
  close(): Promise<void>;
}

export async function startTlsFront(): Promise<TlsFront> {
  let origin: string | null = null;
  const requests: string[] = [];
  const server: Server = createServer({ cert: readFileSync(join(TLS_FIXTURE, 'localhost-cert.pem')), key: readFileSync(join(TLS_FIXTURE, 'localhost-key.pem')) }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (origin === null) return void res.writeHead(503).end();
    const target = new URL(req.url ?? '/', origin);
    const upstream = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    forwardTo(next) {
      origin = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
