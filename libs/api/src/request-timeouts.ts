import type { RuntimeConfig } from '@openbot/platform';
import type { IncomingMessage, Server } from 'node:http';

/** The part of a Fastify request these hooks read (two Fastify type copies are installed). */
interface TimedRequest {
  readonly raw: IncomingMessage;
  readonly method: string;
  readonly routeOptions: { readonly url?: string };
}

type Done = () => void;

/** The part of the Fastify instance the timeouts are installed on. */
interface TimeoutHost {
  readonly server: Server;
  addHook(name: 'onRequest' | 'preHandler' | 'onResponse' | 'onRequestAbort', hook: (request: TimedRequest, reply: unknown, done: Done) => void): unknown;
}

/** What a client whose request did not arrive in time gets before the connection closes (as Node's own request timeout answers). */
const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/**
 * Request and body timeouts (docs/decisions/074), so a client cannot hold a connection by
 * sending slowly:
 * - the headers must arrive within `OPENBOT_BODY_TIMEOUT_SECONDS` (Node's `headersTimeout`);
 * - a body must then arrive in full within the same time: a timer from the request's start to
 *   the end of body parsing (Fastify's preHandler) answers 408 and closes the connection. The
 *   file upload's multipart body is read by its handler, after authentication, under its own
 *   `OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS`; Node's `requestTimeout` is set past that as a backstop;
 * - a response that ends while the request's body is still unread (a refused upload) closes the
 *   connection instead of waiting for the rest.
 * Responses are never timed: an SSE stream or a long poll has received its whole request before
 * it starts, and its own lifetime limits apply (decision 017).
 */
export function installRequestTimeouts(fastify: TimeoutHost, config: RuntimeConfig, uploadRoute: string): void {
  const bodyMs = config.bodyTimeoutSeconds * 1000;
  fastify.server.headersTimeout = bodyMs;
  fastify.server.requestTimeout = (config.files.uploadTimeoutSeconds + config.bodyTimeoutSeconds) * 1000;
  const timers = new WeakMap<IncomingMessage, NodeJS.Timeout>();
  const clear = (request: TimedRequest, _reply: unknown, done: Done): void => {
    clearTimeout(timers.get(request.raw));
    timers.delete(request.raw);
    done();
  };
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!hasBody(request.raw) || isUpload(request, uploadRoute)) return done();
    const timer = setTimeout(() => {
      timers.delete(request.raw);
      const socket = request.raw.socket;
      if (request.raw.complete || socket.destroyed) return;
      socket.write(TIMED_OUT, () => socket.destroy());
    }, bodyMs);
    timer.unref();
    timers.set(request.raw, timer);
    done();
  });
  fastify.addHook('preHandler', clear);
  fastify.addHook('onRequestAbort', clear);
  fastify.addHook('onResponse', (request, reply, done) => {
    // A body nobody will read (the answer came first): close rather than drain it at the client's pace.
    if (hasBody(request.raw) && !request.raw.complete) request.raw.socket.destroySoon();
    clear(request, reply, done);
  });
}

/** The file upload: a multipart body on its route, read by the handler (any other body there is parsed, and timed, as usual). */
function isUpload(request: TimedRequest, uploadRoute: string): boolean {
  const type = request.raw.headers['content-type'];
  return request.method === 'POST' && request.routeOptions.url === uploadRoute && typeof type === 'string' && /^multipart\/form-data\b/i.test(type.trim());
}

/** Whether the request announces a body (Content-Length above 0 or a Transfer-Encoding). */
function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
