import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMcpHandler, McpServer, WebStandardStreamableHTTPServerTransport, fromJsonSchema } from '@modelcontextprotocol/server';

/** A running MCP server on loopback, with its `/mcp` URL. */
/**
 * A request to a server of the legacy session protocol (Mcp-Session-Id, DELETE): a request of a
 * session goes to its transport (404 when the session is unknown, gone after its DELETE); any
 * other starts a new session on a server from `build`.
 */
export async function legacySessionResponse(sessions: Map<string, WebStandardStreamableHTTPServerTransport>, request: Request, build: () => McpServer): Promise<Response> {
  const sessionId = request.headers.get('mcp-session-id');
  if (sessionId !== null) {
    const transport = sessions.get(sessionId);
    if (transport === undefined) return new Response('unknown session', { status: 404 });
    const response = await transport.handleRequest(request);
    if (request.method === 'DELETE') sessions.delete(sessionId);
    return response;
  }
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
    onsessioninitialized: (id: string) => void sessions.set(id, transport),
  });
  await build().connect(transport);
  return transport.handleRequest(request);
}

export interface RunningMcpServer {
  readonly url: string;
  /** Requests the server saw, method and session header, oldest first (what the client really sent). */
  readonly requests: Array<{ method: string; sessionId: string | null; rpc: string | null; headers?: Readonly<Record<string, string>> }>;
  close(): Promise<void>;
}

/** A free loopback port (server-everything takes its port from `PORT` only). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The reference server `@modelcontextprotocol/server-everything` over Streamable HTTP (legacy
 * era, sessions, DELETE), as a child process on loopback. It runs without our environment: its
 * `get-env` tool would print it.
 */
export async function startServerEverything(): Promise<RunningMcpServer & { readonly child: ChildProcess }> {
  const port = await freePort();
  const entry = join(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { PORT: String(port), PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  child.stderr!.resume();
  return {
    child,
    url: `http://127.0.0.1:${port}/mcp`,
    requests: [],
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** An SDK test server; `openSessions()` counts its live legacy sessions. */
export interface RunningSdkServer extends RunningMcpServer {
  openSessions(): number;
  /** Forgets every session (a restart) and drops every open connection, the one of a running call included. */
  dropSessions(): void;
}

/** One tool of an SDK test server: a JSON Schema and a handler. */
export interface TestTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations?: Record<string, boolean>;
  /** The tool's `_meta` (an MCP Apps View: `{ ui: { resourceUri } }`). */
  readonly meta?: Record<string, unknown>;
  readonly handler: (args: Record<string, unknown>, extra: { sendProgress: (progress: number, total?: number, message?: string) => Promise<void> }) => Promise<{ text: string; isError?: boolean }>;
}

/**
 * A server written with the SDK's McpServer (v2). `era: 'modern'` serves the stateless
 * 2026-07-28 revision (createMcpHandler, with its stateless legacy fallback); `era: 'legacy'`
 * serves 2025-era sessions (Mcp-Session-Id, DELETE). `tools()` is read for every request, so a
 * test can change a tool between discovery and call.
 */
export async function startSdkServer(options: {
  readonly era: 'modern' | 'legacy';
  readonly tools: () => readonly TestTool[];
  /** Resources (MCP Apps Views): their URI, HTML and `_meta`. */
  readonly resources?: ReadonlyArray<{ readonly uri: string; readonly html: string; readonly meta?: Record<string, unknown> }>;
  /** Rewrites every answer body before it is sent: how a test plays a server that breaks the protocol (the SDK refuses to). */
  readonly rewrite?: (body: string) => string;
}): Promise<RunningSdkServer> {
  const build = (): McpServer => {
    const server = new McpServer({ name: 'openbot-test-server', version: '1.0.0' });
    for (const tool of options.tools()) {
      server.registerTool(
        tool.name,
        {
          description: tool.description ?? tool.name,
          inputSchema: fromJsonSchema(tool.inputSchema as never),
          ...(tool.annotations ? { annotations: tool.annotations } : {}),
          ...(tool.meta ? { _meta: tool.meta } : {}),
        },
        async (args: unknown, ctx: unknown) => {
          const progressToken = (ctx as { mcpReq?: { _meta?: { progressToken?: unknown } } }).mcpReq?._meta?.progressToken;
          const notify = (ctx as { mcpReq?: { notify?: (n: unknown) => Promise<void> } }).mcpReq?.notify;
          const sendProgress = async (progress: number, total?: number, message?: string): Promise<void> => {
            if (progressToken === undefined || notify === undefined) return;
            await notify({ method: 'notifications/progress', params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) } });
          };
          const out = await tool.handler((args ?? {}) as Record<string, unknown>, { sendProgress });
          return { content: [{ type: 'text' as const, text: out.text }], ...(out.isError ? { isError: true } : {}) };
        },
      );
    }
    for (const resource of options.resources ?? []) {
      server.registerResource(resource.uri, resource.uri, { mimeType: 'text/html;profile=mcp-app' }, async () => ({
        contents: [{ uri: resource.uri, mimeType: 'text/html;profile=mcp-app', text: resource.html, ...(resource.meta ? { _meta: resource.meta } : {}) }],
      }));
    }
    return server;
  };
  const requests: RunningMcpServer['requests'] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const modern = options.era === 'modern' ? createMcpHandler(() => build()) : null;

  const handle = async (request: Request): Promise<Response> => {
    if (modern !== null) return modern.fetch(request);
    return legacySessionResponse(sessions, request, build);
  };

  const http: Server = createServer((req, res) => void serve(req, res, handle, requests, options.rewrite));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    openSessions: () => sessions.size,
    dropSessions: () => {
      sessions.clear();
      http.closeAllConnections();
    },
    close: async () => {
      await modern?.close();
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** node:http → a web Request → the handler's Response, streamed back (SSE included). */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (request: Request) => Promise<Response>,
  requests: RunningMcpServer['requests'],
  rewrite?: (body: string) => string,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  let rpc: string | null;
  try {
    rpc = body.length > 0 ? ((JSON.parse(body.toString()) as { method?: string }).method ?? null) : null;
  } catch {
    rpc = null;
  }
  const sessionHeader = req.headers['mcp-session-id'];
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  requests.push({ method: req.method ?? 'GET', sessionId: typeof sessionHeader === 'string' ? sessionHeader : null, rpc, headers: Object.fromEntries(headers) });
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    const response = await handle(
      new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, signal: abort.signal, ...(req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' ? {} : { body }) }),
    );
    if (rewrite !== undefined && response.body !== null) {
      const text = rewrite(await response.text());
      const headers = Object.fromEntries(response.headers);
      delete headers['content-length'];
      res.writeHead(response.status, headers);
      return void res.end(text);
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) return void res.end();
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
}
