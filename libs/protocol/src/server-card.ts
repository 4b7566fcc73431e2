import { McpFailure } from './failures';
import type { Fetch } from './http/capped-fetch';

/** One input of a remote (a header or a URL variable), as a Server Card declares it. */
export interface RemoteInput {
  readonly description?: string;
  readonly isRequired?: boolean;
  readonly isSecret?: boolean;
  readonly default?: string;
  readonly choices?: readonly string[];
  /** A fixed value: the client sends exactly this. */
  readonly value?: string;
}

export interface RemoteHeader extends RemoteInput {
  readonly name: string;
}

/** How a client reaches the server: a Streamable HTTP URL (with `{variables}`), its headers and variables. */
export interface Remote {
  readonly type: 'streamable-http';
  readonly url: string;
  readonly headers: readonly RemoteHeader[];
  readonly variables: Readonly<Record<string, RemoteInput>>;
  readonly supportedProtocolVersions?: readonly string[];
}

/** What OpenBot keeps of an MCP Server Card (SEP-2127): advisory, never a security decision. */
export interface ServerCard {
  /** Reverse-DNS name, e.g. `io.github.example/weather`. */
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly version: string | null;
  readonly remotes: readonly Remote[];
}

/** What an App URL turned out to be: a card, or a bare Streamable HTTP endpoint without one. */
export type AppDiscovery = { readonly card: true; readonly serverCard: ServerCard } | { readonly card: false; readonly serverCard: ServerCard };

/** Largest card read; a card is a small document. */
export const SERVER_CARD_LIMIT_BYTES = 256 * 1024;

/** The problems of a card document, one line each; empty when it is a valid card. */
export function serverCardIssues(document: unknown): string[] {
  if (!isObject(document)) return ['the card is not a JSON object'];
  const issues: string[] = [];
  if (typeof document.name !== 'string' || document.name.trim() === '') issues.push('name must be a non-empty string');
  for (const key of ['title', 'description', 'version'] as const) {
    if (document[key] !== undefined && typeof document[key] !== 'string') issues.push(`${key} must be a string`);
  }
  if (!Array.isArray(document.remotes) || document.remotes.length === 0) {
    issues.push('remotes must be a non-empty array');
    return issues;
  }
  document.remotes.forEach((remote: unknown, index: number) => {
    if (!isObject(remote)) return issues.push(`remotes.${index} must be an object`);
    if (remote.type !== 'streamable-http') issues.push(`remotes.${index}.type must be "streamable-http" (other transports are not supported)`);
    if (typeof remote.url !== 'string' || !isHttpTemplate(remote.url)) issues.push(`remotes.${index}.url must be an http or https URL`);
    if (remote.headers !== undefined) {
      if (!Array.isArray(remote.headers)) issues.push(`remotes.${index}.headers must be an array`);
      else
        remote.headers.forEach((header: unknown, h: number) => {
          if (!isObject(header) || typeof header.name !== 'string' || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(header.name)) {
            issues.push(`remotes.${index}.headers.${h}.name must be an HTTP header name`);
          }
        });
    }
    if (remote.variables !== undefined && !isObject(remote.variables)) issues.push(`remotes.${index}.variables must be an object`);
    return undefined;
  });
  return issues;
}

/** The card in OpenBot's shape; throws McpFailure `invalid_server` naming every problem. */
export function parseServerCard(document: unknown): ServerCard {
  const issues = serverCardIssues(document);
  if (issues.length > 0) throw new McpFailure('invalid_server', `the Server Card is not valid: ${issues.join('; ')}`);
  const card = document as Record<string, unknown>;
  return {
    name: card.name as string,
    title: typeof card.title === 'string' ? card.title : null,
    description: typeof card.description === 'string' ? card.description : null,
    version: typeof card.version === 'string' ? card.version : null,
    remotes: (card.remotes as Record<string, unknown>[]).map(toRemote),
  };
}

/** The one remote of a bare Streamable HTTP endpoint (an App registered without a card). */
export function bareRemote(url: string): Remote {
  return { type: 'streamable-http', url, headers: [], variables: {} };
}

/**
 * Reads an App URL once: a JSON document with `remotes` is a Server Card (validated; a broken
 * card fails, it is never half-used); any other answer (an MCP endpoint answers a plain GET with
 * 400, 405, 406 or an event stream) makes the URL a bare Streamable HTTP endpoint, named after its
 * host. A URL that cannot be reached fails: nothing is registered from a guess.
 */
export async function discoverApp(fetch: Fetch, url: string, options: { signal?: AbortSignal } = {}): Promise<AppDiscovery> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'GET', headers: { accept: 'application/json' }, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    const refused = (error as { safeToRetry?: unknown } | null)?.safeToRetry === false;
    throw new McpFailure(refused ? 'refused' : 'unreachable', refused ? (error as Error).message : `the App URL could not be reached`, { cause: error });
  }
  const type = response.headers.get('content-type') ?? '';
  if (response.ok && /^application\/(.+\+)?json/i.test(type)) {
    let document: unknown;
    try {
      document = JSON.parse(await response.text());
    } catch (error) {
      throw new McpFailure('invalid_server', 'the App URL answered JSON that cannot be read', { cause: error });
    }
    if (isObject(document) && 'remotes' in document) return { card: true, serverCard: parseServerCard(document) };
  } else {
    await response.body?.cancel().catch(() => undefined);
  }
  if (response.status >= 500 || response.status === 429) throw new McpFailure('unreachable', `the App URL answered HTTP ${response.status}`);
  const host = new URL(url).host;
  return { card: false, serverCard: { name: host, title: null, description: null, version: null, remotes: [bareRemote(url)] } };
}

/**
 * The remote's URL with its `{variables}` filled in (URL-encoded), each from `values`, else its
 * fixed value, else its default. Throws McpFailure `invalid_server` for a variable that has none.
 */
export function remoteUrl(remote: Remote, values: Readonly<Record<string, string>>): string {
  return remote.url.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const input = remote.variables[name];
    const value = input?.value ?? values[name] ?? input?.default;
    if (value === undefined) throw new McpFailure('invalid_server', `the remote's URL variable "${name}" has no value`);
    return encodeURIComponent(value);
  });
}

function toRemote(remote: Record<string, unknown>): Remote {
  const headers = Array.isArray(remote.headers) ? (remote.headers as Record<string, unknown>[]).map((h) => ({ ...inputOf(h), name: h.name as string })) : [];
  const variables: Record<string, RemoteInput> = {};
  if (isObject(remote.variables)) for (const [name, value] of Object.entries(remote.variables)) variables[name] = inputOf(isObject(value) ? value : {});
  const versions = Array.isArray(remote.supportedProtocolVersions) ? remote.supportedProtocolVersions.filter((v): v is string => typeof v === 'string') : undefined;
  return { type: 'streamable-http', url: remote.url as string, headers, variables, ...(versions ? { supportedProtocolVersions: versions } : {}) };
}

function inputOf(value: Record<string, unknown>): RemoteInput {
  const out: { -readonly [K in keyof RemoteInput]: RemoteInput[K] } = {};
  if (typeof value.description === 'string') out.description = value.description;
  if (typeof value.isRequired === 'boolean') out.isRequired = value.isRequired;
  if (typeof value.isSecret === 'boolean') out.isSecret = value.isSecret;
  if (typeof value.default === 'string') out.default = value.default;
  if (typeof value.value === 'string') out.value = value.value;
  if (Array.isArray(value.choices)) out.choices = value.choices.filter((c): c is string => typeof c === 'string');
  return out;
}

function isHttpTemplate(url: string): boolean {
  try {
    const parsed = new URL(url.replace(/\{[^}]+\}/g, 'x'));
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
