import { Client, InsufficientScopeError, ProtocolError, SdkError, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import { cappedFetch, McpAnswerTooLarge, type Fetch } from './http/capped-fetch';
import { checkToolList, DEFAULT_MAX_TOOLS, type CheckedToolList, type ToolDeclaration } from './declaration';
import { McpFailure } from './failures';

/**
 * Headers of one request, resolved when it is sent (not when the connection opens): this is
 * where a secret from a Vault is read, so a revoked grant or a changed value takes effect at the
 * next request, and no secret is kept in the connection object.
 */
export type HeaderSource = () => Promise<Readonly<Record<string, string>>> | Readonly<Record<string, string>>;

/** Which protocol era to speak: `auto` probes `server/discover` and falls back to `initialize`. */
export type EraPreference = 'auto' | 'legacy' | 'modern';

export interface OpenOptions {
  /** The Streamable HTTP endpoint (a remote's URL with its variables filled in). */
  readonly url: string;
  /** The only way out: OpenBot passes its pinned egress client's fetch. */
  readonly fetch: Fetch;
  /** Cap on every answer body, SSE streams included. */
  readonly answerLimitBytes: number;
  readonly headers?: HeaderSource;
  readonly era?: EraPreference;
  /** Time allowed for one request (initialize, discover, a list, a call), default 60 s. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Most tools kept from one list (see checkToolList). */
  readonly maxTools?: number;
}

/** How a connection ended: what a cleanup stores as the scope's close result (RES-06, RES-07). */
export type CloseResult =
  /** A legacy session was ended with DELETE. */
  | { readonly kind: 'deleted'; readonly sessionId: string }
  /** The server no longer knew the session (404) or does not end sessions (405): closed all the same. */
  | { readonly kind: 'already_closed'; readonly sessionId: string; readonly status: number }
  /**
   * The server refused the DELETE itself (401, 403) with the connection's current credentials:
   * it accepts nothing more for the session, so nothing more can end it. Final, not retried.
   */
  | { readonly kind: 'refused'; readonly sessionId: string; readonly status: number }
  /** Nothing to tell the server: a stateless 2026-07-28 connection, or a legacy one without a session. */
  | { readonly kind: 'local' };

/** A View of a tool (MCP Apps): the HTML and what it asks of the host that renders it. */
export interface McpView {
  readonly uri: string;
  readonly mimeType: string;
  readonly html: string;
  /** `_meta.ui.csp`: connectDomains, resourceDomains, frameDomains, baseUriDomains (as the server gave them). */
  readonly csp: Record<string, unknown>;
  /** `_meta.ui.permissions`: camera, microphone, geolocation, clipboardWrite … */
  readonly permissions: Record<string, unknown>;
  readonly domain: string | null;
}

/** What a tool call answered, in the shape OpenBot keeps. */
export interface ToolCallAnswer {
  readonly isError: boolean;
  /** The text parts joined, and a short note for each non-text part. */
  readonly text: string;
  readonly structuredContent?: unknown;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** MCP progress notifications of this call (OpenBot publishes them as `tool.progress`). */
  readonly onProgress?: (progress: { readonly progress: number; readonly total?: number; readonly message?: string }) => void;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** Most `tools/list` pages read in one discovery. */
const MAX_LIST_PAGES = 64;
/** A result schema that accepts any result (a Standard Schema): the tools are checked one by one afterwards. */
const ANY_RESULT = { '~standard': { version: 1 as const, vendor: 'openbot', validate: (value: unknown) => ({ value }) } };
const CLIENT_INFO = { name: 'openbot', version: '0.1.0' };

/**
 * One open MCP connection over Streamable HTTP, in either era. Opening runs only the handshake
 * (`server/discover` or `initialize`): it reads no capability list (STC-12). `listTools` is full
 * discovery, a separate operation; `callTool` sends a saved declaration as it is.
 */
export class McpConnection {
  private constructor(
    private client: Client,
    private transport: StreamableHTTPClientTransport,
    private readonly options: OpenOptions,
    /** The raw tools of the `tools/list` answers, as the server sent them (see rawToolLists). */
    private readonly listed: unknown[][],
  ) {}

  /** Connects and negotiates the era; fails with an McpFailure whose reason says why. */
  static async open(options: OpenOptions): Promise<McpConnection> {
    const listed: unknown[][] = [];
    const { client, transport } = await McpConnection.connect(options, listed);
    return new McpConnection(client, transport, options, listed);
  }

  private static async connect(options: OpenOptions, listed: unknown[][]): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const era = options.era ?? 'auto';
    const client = new Client(options.clientInfo ?? CLIENT_INFO, {
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : era === 'modern' ? { pin: '2026-07-28' } : 'auto' },
    });
    const transport = new StreamableHTTPClientTransport(new URL(options.url), {
      fetch: rawToolLists(withHeaders(cappedFetch(options.fetch, options.answerLimitBytes), options.headers), listed),
      // Redirects are not followed: the egress client returns them as they are (a redirect could
      // lead to a host the policy never saw).
      redirectPolicy: 'same-origin',
      reconnectionOptions: { maxReconnectionDelay: 5_000, initialReconnectionDelay: 500, reconnectionDelayGrowFactor: 2, maxRetries: 0 },
    });
    try {
      await client.connect(transport, { timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw toFailure(error, 'open');
    }
    return { client, transport };
  }

  /** The endpoint this connection reached. */
  get url(): string {
    return this.options.url;
  }

  /** `modern` (2026-07-28, stateless) or `legacy` (initialize and sessions). */
  get era(): 'modern' | 'legacy' {
    return this.client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  }

  get protocolVersion(): string | null {
    return this.client.getNegotiatedProtocolVersion() ?? null;
  }

  /** The legacy session ID the server gave, if any: the physical scope a cleanup must end. */
  get sessionId(): string | null {
    return this.transport.sessionId ?? null;
  }

  get serverInfo(): { readonly name: string; readonly version: string } | null {
    const info = this.client.getServerVersion();
    return info === undefined ? null : { name: info.name, version: info.version };
  }

  /**
   * Full discovery: every page of `tools/list`, checked tool by tool (never from a cache). The
   * pages are read without the SDK's result schema, which would refuse the whole list for one bad
   * tool: `checkToolList` refuses each bad tool on its own instead.
   */
  async listTools(options: { signal?: AbortSignal } = {}): Promise<CheckedToolList> {
    const tools: unknown[] = [];
    this.listed.length = 0;
    try {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const result = (await this.client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ANY_RESULT, {
          timeout: this.timeout(),
          ...(options.signal ? { signal: options.signal } : {}),
        })) as { tools?: unknown; nextCursor?: unknown };
        if (!Array.isArray(result.tools)) throw new McpFailure('invalid_server', 'the server answered tools/list without a tools array');
        // The page as the server sent it, not as the SDK was shown it.
        tools.push(...(this.listed.shift() ?? result.tools));
        if (typeof result.nextCursor !== 'string' || result.nextCursor === '' || result.nextCursor === cursor) break;
        cursor = result.nextCursor;
        // Already far over the cap: the rest would be cut anyway.
        if (tools.length > (this.options.maxTools ?? DEFAULT_MAX_TOOLS) * 4) break;
      }
    } catch (error) {
      throw toFailure(error, 'list');
    }
    return checkToolList(tools, this.options.maxTools ?? DEFAULT_MAX_TOOLS);
  }

  /**
   * Sends `tools/call` for a saved declaration, with the arguments as they are. The SDK gets the
   * saved definition, so it never lists tools to validate or mirror (STC-12). A lost answer is an
   * McpFailure `answer_lost` (`resultLost`), which the engine's call log turns into
   * outcome_unknown for an unsafe tool.
   */
  async callTool(declaration: ToolDeclaration, args: Record<string, unknown>, options: CallOptions = {}): Promise<ToolCallAnswer> {
    try {
      return await this.send(declaration, args, options);
    } catch (error) {
      // A legacy server that lost the session (a restart, an expiry) answers 404 before doing
      // anything: the spec's answer is a new `initialize`, then the same request once more.
      if (!(error instanceof McpFailure) || error.reason !== 'session_lost' || this.era !== 'legacy') throw error;
      await this.client.close().catch(() => undefined);
      ({ client: this.client, transport: this.transport } = await McpConnection.connect({ ...this.options, era: 'legacy' }, this.listed));
      return this.send(declaration, args, options);
    }
  }

  private async send(declaration: ToolDeclaration, args: Record<string, unknown>, options: CallOptions): Promise<ToolCallAnswer> {
    const definition: Tool = { name: declaration.serverName, description: declaration.description, inputSchema: declaration.inputSchema as Tool['inputSchema'] };
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await this.client.callTool(
        { name: declaration.serverName, arguments: args },
        {
          toolDefinition: definition,
          timeout: options.timeoutMs ?? this.timeout(),
          resetTimeoutOnProgress: true,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onProgress
            ? { onprogress: (p: { progress: number; total?: number; message?: string }) => options.onProgress!({ progress: p.progress, ...(p.total === undefined ? {} : { total: p.total }), ...(p.message === undefined ? {} : { message: p.message }) }) }
            : {}),
        },
      );
    } catch (error) {
      throw toFailure(error, 'call');
    }
    return answerOf(result);
  }

  /**
   * Reads an MCP Apps View (`ui://` resource, SEP-1865): its HTML and what its `_meta.ui` asks
   * of the host (CSP domains, permissions, a dedicated domain). Only `ui://` URIs are read.
   */
  async readView(uri: string, options: { signal?: AbortSignal } = {}): Promise<McpView> {
    if (!uri.startsWith('ui://')) throw new McpFailure('invalid_server', 'a View must be a ui:// resource');
    let result: Awaited<ReturnType<Client['readResource']>>;
    try {
      result = await this.client.readResource({ uri }, { cacheMode: 'bypass', timeout: this.timeout(), ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      throw toFailure(error, 'list');
    }
    const content = (result.contents as Array<Record<string, unknown>>).find((c) => c.uri === uri) ?? (result.contents[0] as Record<string, unknown> | undefined);
    if (content === undefined || typeof content.text !== 'string') throw new McpFailure('invalid_server', 'the View resource has no HTML text');
    const ui = ((content._meta as { ui?: Record<string, unknown> } | undefined)?.ui ?? {}) as Record<string, unknown>;
    return {
      uri,
      mimeType: typeof content.mimeType === 'string' ? content.mimeType : 'text/html',
      html: content.text,
      csp: isRecord(ui.csp) ? ui.csp : {},
      permissions: isRecord(ui.permissions) ? ui.permissions : {},
      domain: typeof ui.domain === 'string' ? ui.domain : null,
    };
  }

  /**
   * Ends the connection. A legacy session is ended with `DELETE` (404 and 405 count as closed,
   * 401 and 403 as refused for good);
   * a stateless connection has nothing to end on the server. A failed DELETE throws (the scope is
   * not proven released, RES-06) after closing the local side.
   */
  async close(): Promise<CloseResult> {
    const sessionId = this.sessionId;
    try {
      if (sessionId === null || this.era === 'modern') return { kind: 'local' };
      try {
        await this.transport.terminateSession();
        return { kind: 'deleted', sessionId };
      } catch (error) {
        const final = finalCloseOf(error, sessionId);
        if (final !== null) return final;
        throw toFailure(error, 'close');
      }
    } finally {
      await this.client.close().catch(() => undefined);
    }
  }

  private timeout(): number {
    return this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }
}

/**
 * Keeps the raw tools of every `tools/list` answer in `listed` and hands the SDK a copy in which a
 * tool it would refuse (a schema that is not an object, a missing name) is a harmless stand-in:
 * the SDK validates the whole result and would refuse the whole list for one bad tool, while
 * OpenBot refuses each bad tool on its own (checkToolList reads the raw ones).
 */
function rawToolLists(fetch: Fetch, listed: unknown[][]): Fetch {
  return async (input, init) => {
    let list: boolean;
    try {
      list = typeof init?.body === 'string' && (JSON.parse(init.body) as { method?: unknown }).method === 'tools/list';
    } catch {
      list = false;
    }
    const response = await fetch(input, init);
    if (!list || !response.ok || response.body === null) return response;
    const text = await response.text();
    const keep = (json: string): string => {
      try {
        const message = JSON.parse(json) as { result?: { tools?: unknown } };
        if (!Array.isArray(message.result?.tools)) return json;
        listed.push(structuredClone(message.result.tools));
        message.result.tools = message.result.tools.map((tool: unknown, index: number) => {
          const t = (typeof tool === 'object' && tool !== null ? tool : {}) as Record<string, unknown>;
          const schema = t.inputSchema as { type?: unknown } | undefined;
          const usable = typeof t.name === 'string' && typeof schema === 'object' && schema !== null && schema.type === 'object';
          return usable ? t : { name: typeof t.name === 'string' ? t.name : `refused-${index}`, inputSchema: { type: 'object' } };
        });
        return JSON.stringify(message);
      } catch {
        return json;
      }
    };
    const rewritten = text.trimStart().startsWith('{') ? keep(text) : text.replace(/^data: ?(.+)$/gm, (_line, json: string) => `data: ${keep(json)}`);
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(rewritten, { status: response.status, statusText: response.statusText, headers });
  };
}

/** Adds the resolved headers to every request; the transport's own headers (session, version) win. */
function withHeaders(fetch: Fetch, source: HeaderSource | undefined): Fetch {
  if (source === undefined) return fetch;
  return async (input, init) => {
    const resolved = await source();
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(resolved)) if (!headers.has(name)) headers.set(name, value);
    return fetch(input, { ...init, headers });
  };
}

function answerOf(result: Record<string, unknown>): ToolCallAnswer {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((part) => {
    if (part.type === 'text' && typeof part.text === 'string') return part.text;
    if (part.type === 'resource_link' && typeof part.uri === 'string') return `[resource ${part.uri}]`;
    if (part.type === 'resource' && typeof (part.resource as { uri?: unknown } | undefined)?.uri === 'string') return `[resource ${(part.resource as { uri: string }).uri}]`;
    return `[${typeof part.type === 'string' ? part.type : 'content'}]`;
  });
  if (parts.length === 0 && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  return {
    isError: result.isError === true,
    text: parts.join('\n'),
    ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent }),
  };
}

/**
 * The SDK's failures as McpFailures. A request that was sent and whose answer never came (a
 * timeout, a dropped stream) is `answer_lost` only for `tools/call`: a lost list or handshake
 * changed nothing and is simply `unreachable`. The server's text stays in the cause.
 */
export function toFailure(error: unknown, during: 'open' | 'list' | 'call' | 'close'): McpFailure {
  if (error instanceof McpFailure) return error;
  if (findCause(error, (e) => e instanceof McpAnswerTooLarge)) return new McpFailure('invalid_server', 'the MCP server answered more than the byte cap allows', { cause: error });
  const refused = findCause(error, (e) => (e as { name?: unknown }).name === 'EgressRefused');
  if (refused) return new McpFailure('refused', (refused as Error).message, { cause: error });
  // A header source that refused to give a value (a Vault reference the work may not use): nothing was sent.
  const withheld = findCause(error, (e) => (e as { notSent?: unknown }).notSent === true && e instanceof Error);
  if (withheld) return new McpFailure('refused', (withheld as Error).message, { cause: error });
  const code = (findCause(error, (e) => typeof (e as { code?: unknown }).code === 'string' && NOT_SENT_CODES.has((e as { code: string }).code)) as { code?: string } | undefined)?.code;
  if (code !== undefined) return new McpFailure('unreachable', 'the MCP server could not be reached', { cause: error });
  const network = findCause(error, (e) => e instanceof TypeError && /fetch failed/i.test((e as Error).message));
  if (network !== undefined && during === 'open') return new McpFailure('unreachable', 'the MCP server could not be reached', { cause: error });
  // A 403 insufficient_scope (scope step-up): App OAuth records the scope; the connection needs authorization again.
  if (findCause(error, (e) => e instanceof InsufficientScopeError)) return new McpFailure('needs_authorization', 'the MCP server needs more scope (HTTP 403 insufficient_scope)', { cause: error });
  if (error instanceof ProtocolError) return new McpFailure('protocol_error', `the MCP server refused the request (JSON-RPC error ${(error as { code?: unknown }).code})`, { cause: error });
  const status = (error as { data?: { status?: unknown } } | null)?.data?.status;
  if (typeof status === 'number') {
    if (status === 401 || status === 403) return new McpFailure('needs_authorization', `the MCP server answered HTTP ${status}: it needs authorization`, { cause: error });
    if (status >= 500 || status === 429) return new McpFailure('unreachable', `the MCP server answered HTTP ${status}`, { cause: error });
    if (status === 404 && during !== 'open') return new McpFailure('session_lost', 'the MCP server no longer knows this session (HTTP 404)', { cause: error });
    return new McpFailure('invalid_server', `the MCP server answered HTTP ${status}`, { cause: error });
  }
  if (error instanceof SdkError) {
    const code = String(error.code);
    if (/timeout/i.test(code)) return new McpFailure(during === 'call' ? 'answer_lost' : 'unreachable', `the MCP server did not answer in time`, { cause: error });
    if (/closed|abort/i.test(code)) return new McpFailure(during === 'call' ? 'answer_lost' : 'unreachable', 'the connection to the MCP server closed before its answer', { cause: error });
    if (/negotiat|version|era/i.test(code)) return new McpFailure('invalid_server', 'the MCP server speaks no protocol revision OpenBot supports', { cause: error });
  }
  if ((error as { name?: unknown } | null)?.name === 'AbortError') return new McpFailure(during === 'call' ? 'answer_lost' : 'unreachable', 'the MCP request was cut off', { cause: error });
  // A network error: before an answer came. For a call it may have reached the server.
  return new McpFailure(during === 'call' ? 'answer_lost' : 'unreachable', 'the MCP server could not be reached', { cause: error });
}

/** Connection errors that prove nothing was sent. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

function findCause(error: unknown, test: (e: unknown) => boolean): unknown {
  // The SDK keeps a network error under `data.cause`, others under `cause`.
  const next = (e: object): unknown => (e as { cause?: unknown }).cause ?? (e as { data?: { cause?: unknown } }).data?.cause;
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 6; e = next(e), depth++) if (test(e)) return e;
  return undefined;
}

/**
 * Ends a legacy session another process opened (a remote cleanup of a physical scope, RES-07):
 * `DELETE` with its `Mcp-Session-Id`, the same close result as `McpConnection.close`. A failed
 * DELETE (a 5xx, a network error) throws: the scope is not proven released (RES-06).
 */
export async function closeSession(options: {
  readonly url: string;
  readonly sessionId: string;
  readonly protocolVersion: string | null;
  readonly fetch: Fetch;
  readonly headers?: HeaderSource;
}): Promise<CloseResult> {
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    fetch: withHeaders(cappedFetch(options.fetch, 64 * 1024), options.headers),
    sessionId: options.sessionId,
    ...(options.protocolVersion === null ? {} : { protocolVersion: options.protocolVersion }),
  });
  try {
    await transport.terminateSession();
    return { kind: 'deleted', sessionId: options.sessionId };
  } catch (error) {
    const final = finalCloseOf(error, options.sessionId);
    if (final !== null) return final;
    throw toFailure(error, 'close');
  } finally {
    await transport.close().catch(() => undefined);
  }
}

/** A DELETE answer that ends the session for good: 404/405 (gone, or never ended), 401/403 (refused with current credentials). */
function finalCloseOf(error: unknown, sessionId: string): CloseResult | null {
  const status = (error as { data?: { status?: unknown } }).data?.status;
  if (status === 404 || status === 405) return { kind: 'already_closed', sessionId, status };
  if (status === 401 || status === 403) return { kind: 'refused', sessionId, status };
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
