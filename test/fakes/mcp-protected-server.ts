import { createMcpHandler, fromJsonSchema, McpServer, OAuthError, OAuthErrorCode, requireBearerAuth, WebStandardStreamableHTTPServerTransport, type AuthInfo } from '@modelcontextprotocol/server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestAuthorizationServer } from '../support/oauth-authorization-server';
import { legacySessionResponse } from './mcp-test-servers';

/** An MCP server protected by OAuth: what it saw, and switches a test uses to play a resource server's moves. */
export interface ProtectedMcpServer {
  /** `http://127.0.0.1:<port>/mcp`: the resource identifier too. */
  readonly url: string;
  /** Access tokens of the requests it accepted, in order. */
  readonly accepted: string[];
  /** How many requests it refused with 401. */
  refusals(): number;
  /** Settles once the server has refused `count` requests in all. */
  refused(count: number): Promise<void>;
  /** From now on, refuse every token accepted so far (as if they had expired or been revoked at the resource). */
  refuseTokensSeenSoFar(): void;
  /** From now on, requests need these scopes too (a 403 `insufficient_scope` names them); null: only a valid token. */
  requireScopes(scopes: readonly string[] | null): void;
  /** Changes the protected-resource metadata document (a server that names another resource, say). */
  rewriteMetadata(rewrite: ((document: Record<string, unknown>) => void) | null): void;
  /** With `sessions`: the legacy sessions it holds now (Mcp-Session-Id), each opened with a valid token. */
  openSessions(): number;
  /** With `sessions`: every DELETE of a session, with the token it carried (null: none) and the answer's status. */
  readonly deletes: Array<{ readonly sessionId: string | null; readonly token: string | null; readonly status: number }>;
  /** From now on, an accepted request waits for `until` before it is answered (null: answer at once again). */
  holdAccepted(until: Promise<void> | null): void;
  /** Settles once an accepted request waits on the hold. */
  held(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A small MCP resource server built from the SDK (v2): `requireBearerAuth` in front of a
 * stateless `createMcpHandler`, with its protected-resource metadata (RFC 9728) at the
 * path-suffixed well-known URL and named in its 401 challenge. Its verifier looks the token up
 * at the test authorization server and accepts it only for this resource (the RFC 8707
 * audience). Its one tool, `whoami`, answers the account the token was issued to.
 */
export async function startProtectedMcpServer(as: TestAuthorizationServer, options: { readonly sessions?: boolean } = {}): Promise<ProtectedMcpServer> {
  let url = '';
  const accepted: string[] = [];
  const refused = new Set<string>();
  let refusals = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let rewrite: ((document: Record<string, unknown>) => void) | null = null;
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const deletes: ProtectedMcpServer['deletes'] = [];
  let hold: Promise<void> | null = null;
  let holding = 0;
  const holdWaiters: Array<() => void> = [];

  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const found = refused.has(token) ? null : await as.findAccessToken(token);
      if (found === null) throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown, expired or revoked token');
      return { token, clientId: found.clientId, scopes: found.scope.split(' ').filter(Boolean), expiresAt: found.exp, ...(found.aud === null ? {} : { resource: new URL(found.aud) }), extra: { accountId: found.accountId } };
    },
  };
  let gate: ((request: Request) => Promise<AuthInfo | Response>) | null = null;
  let scopedGate: ((request: Request) => Promise<AuthInfo | Response>) | null = null;
  const build = (auth: AuthInfo): McpServer => {
    const server = new McpServer({ name: 'openbot-protected-test-server', version: '1.0.0' });
    server.registerTool('whoami', { description: 'The account the caller’s token was issued to', inputSchema: fromJsonSchema({ type: 'object', properties: {} } as never), annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text' as const, text: String(auth.extra?.accountId ?? '') }],
    }));
    return server;
  };

  const handle = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (path === '/.well-known/oauth-protected-resource/mcp') {
      const document: Record<string, unknown> = { resource: url, authorization_servers: [as.issuer], scopes_supported: ['tools'], bearer_methods_supported: ['header'] };
      rewrite?.(document);
      return Response.json(document);
    }
    if (path !== '/mcp') return new Response('not found', { status: 404 });
    const answer = await gated(request);
    if (request.method === 'DELETE') deletes.push({ sessionId: request.headers.get('mcp-session-id'), token: /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? null, status: answer.status });
    return answer;
  };
  const gated = async (request: Request): Promise<Response> => {
    const auth = await (scopedGate ?? gate!)(request);
    if (auth instanceof Response) {
      if (auth.status === 401) refusals++;
      for (const waiter of waiters.filter((w) => w.count <= refusals)) waiter.resolve();
      return auth;
    }
    accepted.push(auth.token);
    if (hold !== null) {
      const waiting = hold;
      holding += 1;
      for (const resolve of holdWaiters.splice(0)) resolve();
      await waiting;
    }
    if (options.sessions !== true) return createMcpHandler(() => build(auth)).fetch(request);
    // Legacy sessions (Mcp-Session-Id, DELETE), each request behind the same bearer check.
    return legacySessionResponse(sessions, request, () => build(auth));
  };

  const http: Server = createServer((req, res) => void serve(req, res, handle));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  gate = requireBearerAuth({ verifier, expectedResource: new URL(url), resourceMetadataUrl: `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp` });
  return {
    url,
    accepted,
    refusals: () => refusals,
    refused: (count) => (refusals >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))),
    refuseTokensSeenSoFar() {
      for (const token of accepted) refused.add(token);
    },
    requireScopes(scopes) {
      scopedGate = scopes === null ? null : requireBearerAuth({ verifier, requiredScopes: [...scopes], expectedResource: new URL(url), resourceMetadataUrl: `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp` });
    },
    rewriteMetadata(next) {
      rewrite = next;
    },
    openSessions: () => sessions.size,
    deletes,
    holdAccepted(until) {
      hold = until;
      holding = 0;
    },
    held: () => (holding > 0 ? Promise.resolve() : new Promise<void>((resolve) => holdWaiters.push(resolve))),
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function serve(req: IncomingMessage, res: ServerResponse, handle: (request: Request) => Promise<Response>): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  try {
    const response = await handle(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, ...(req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' ? {} : { body }) }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) return void res.end();
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
}
