/** The part of Fastify's reply the hook uses (two Fastify type copies are installed). */
export interface HeaderReply {
  header(name: string, value: string): unknown;
  hasHeader(name: string): boolean;
}

/**
 * Fastify's `onSend` hook for the headers every HTTP answer carries, set once here rather than in
 * each controller (decision 069). It runs on every reply that goes through Fastify's `send`: route
 * answers, error answers, the router's own 404s and the API explorer's pages alike; the router's
 * answer to a malformed URL skips hooks and calls {@link addSecurityHeaders} itself. Event streams
 * are hijacked replies that write their own headers on the socket, so it never touches them.
 *
 * - `X-Content-Type-Options: nosniff`: a browser never reads an answer as another type than the
 *   one it declares (a JSON body that echoes input is never run as script or shown as HTML).
 * - `Cache-Control: no-store` unless the route set its own policy: answers carry key secrets, CSRF
 *   tokens and organization data, which no browser or proxy may keep. The routes meant to be kept
 *   say so themselves (a file's bytes revalidate by etag, a registration's client metadata
 *   document is public, Swagger UI's static files).
 * - `Content-Security-Policy: frame-ancestors 'none'` unless the route set its own policy: no page
 *   of another origin may frame the API explorer at `/docs`, where a signed-in browser can act
 *   (clickjacking), nor any other answer.
 */
export function securityHeaders(_request: unknown, reply: HeaderReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
  addSecurityHeaders(reply);
  done(null, payload);
}

/** Sets the headers of {@link securityHeaders} on a reply, keeping a route's own cache and content security policy. */
export function addSecurityHeaders(reply: HeaderReply): void {
  reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', "frame-ancestors 'none'");
}
