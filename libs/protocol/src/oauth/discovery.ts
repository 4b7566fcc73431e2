import { checkResourceAllowed, discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/client';
import type { Fetch } from '../http/capped-fetch';
import { OAuthFailure, toOAuthFailure } from './oauth-failure';

/** The authorization-server metadata OpenBot keeps (RFC 8414): only the fields it uses. */
export interface AuthorizationServerInfo {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly registration_endpoint?: string;
  readonly revocation_endpoint?: string;
  readonly scopes_supported?: readonly string[];
  readonly response_types_supported: readonly string[];
  readonly code_challenge_methods_supported?: readonly string[];
  readonly token_endpoint_auth_methods_supported?: readonly string[];
  readonly authorization_response_iss_parameter_supported?: boolean;
  readonly client_id_metadata_document_supported?: boolean;
}

/** What discovery found for one MCP server: where to authorize, for which resource, with which scope. */
export interface DiscoveredAuthorization {
  /** The RFC 8707 resource indicator, exactly as the protected-resource metadata gave it; sent on every request. */
  readonly resource: string;
  readonly metadata: AuthorizationServerInfo;
  /** The scope to ask for: the challenge's, else the resource's `scopes_supported`; with `offline_access` when the server lists it. */
  readonly scope: string | null;
}

/** A 401 challenge's parameters (RFC 6750 / RFC 9728 `resource_metadata`). */
export interface BearerChallenge {
  readonly resourceMetadataUrl: string | null;
  readonly scope: string | null;
}

const PROBE_VERSION = '2025-11-25';
const PROBE_BODY = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: PROBE_VERSION, capabilities: {}, clientInfo: { name: 'openbot', version: '0.1.0' } } });
const LIST_PROBE_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

/**
 * Asks the MCP server without credentials and reads its 401 challenge: first an `initialize`;
 * a server that lets `initialize` through (some challenge only later requests) is asked once
 * more with `tools/list` in the session it gave. A server that answers both without a challenge
 * needs no authorization (`not_required`).
 */
export async function readBearerChallenge(fetch: Fetch, serverUrl: string, signal?: AbortSignal): Promise<BearerChallenge> {
  const probe = async (body: string, headers: Record<string, string>): Promise<Response> => {
    let response: Response;
    try {
      response = await fetch(serverUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw toOAuthFailure(error, 'discovery');
    }
    await response.body?.cancel().catch(() => undefined);
    return response;
  };
  const first = await probe(PROBE_BODY, {});
  if (first.status === 401) return bearerChallengeOf(first);
  if (first.ok) {
    const session = first.headers.get('mcp-session-id');
    const second = await probe(LIST_PROBE_BODY, { 'mcp-protocol-version': PROBE_VERSION, ...(session === null ? {} : { 'mcp-session-id': session }) });
    if (second.status === 401) return bearerChallengeOf(second);
  }
  throw new OAuthFailure('not_required', `the MCP server answered HTTP ${first.status} without credentials: it asks for no authorization`);
}

/** The `resource_metadata` and `scope` of a 401 or 403 answer's `WWW-Authenticate: Bearer` challenge. */
export function bearerChallengeOf(response: Response): BearerChallenge {
  const params = extractWWWAuthenticateParams(response);
  return { resourceMetadataUrl: params.resourceMetadataUrl?.href ?? null, scope: params.scope ?? null };
}

/**
 * The scope a 403 `insufficient_scope` challenge asks for (RFC 6750 §3.1, MCP scope step-up), or
 * null when the 403 is anything else.
 */
export function insufficientScopeOf(response: Response): string | null {
  if (response.status !== 403) return null;
  const params = extractWWWAuthenticateParams(response);
  return params.error === 'insufficient_scope' ? (params.scope ?? '') : null;
}

/**
 * Scope step-ups authorized in a row before OpenBot refuses another (a server that keeps asking
 * for more): with the first authorization, at most 3 authorization requests for one grant, as
 * the MCP client conformance suite's `auth/scope-retry-limit` expects.
 */
export const STEP_UP_LIMIT = 2;

/** The union of space-separated scopes, each once, in first-seen order (null when empty). */
export function scopeUnion(...scopes: ReadonlyArray<string | null | undefined>): string | null {
  const seen = new Set<string>();
  for (const scope of scopes) for (const token of (scope ?? '').split(/\s+/)) if (token !== '') seen.add(token);
  return seen.size === 0 ? null : [...seen].join(' ');
}

/**
 * MCP authorization discovery, step by step over the given fetch (OpenBot's pinned egress
 * client): the protected-resource metadata (RFC 9728) from the challenge's `resource_metadata`,
 * else the path-suffixed and root well-known URLs; its `resource` must cover the server URL. Then
 * the first authorization server's metadata (RFC 8414, with the OpenID fallbacks), whose
 * `issuer` must be the one asked for. A server that does not advertise PKCE S256 is refused.
 */
export async function discoverAuthorization(fetch: Fetch, serverUrl: string, challenge: BearerChallenge): Promise<DiscoveredAuthorization> {
  let resourceMetadata: { resource: string; authorization_servers?: string[]; scopes_supported?: string[] };
  try {
    resourceMetadata = await discoverOAuthProtectedResourceMetadata(serverUrl, challenge.resourceMetadataUrl === null ? {} : { resourceMetadataUrl: challenge.resourceMetadataUrl }, fetch);
  } catch (error) {
    const failure = toOAuthFailure(error, 'discovery');
    throw failure.reason === 'rejected' ? new OAuthFailure('discovery_failed', 'the server publishes no protected-resource metadata', { cause: error }) : failure;
  }
  if (!checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resourceMetadata.resource })) {
    throw new OAuthFailure('resource_mismatch', 'the protected-resource metadata names another resource than this server');
  }
  const issuer = resourceMetadata.authorization_servers?.[0];
  if (issuer === undefined) throw new OAuthFailure('discovery_failed', 'the protected-resource metadata names no authorization server');
  let metadata: AuthorizationServerInfo | undefined;
  try {
    metadata = (await discoverAuthorizationServerMetadata(issuer, { fetchFn: fetch })) as AuthorizationServerInfo | undefined;
  } catch (error) {
    throw toOAuthFailure(error, 'discovery');
  }
  if (metadata === undefined) throw new OAuthFailure('discovery_failed', 'the authorization server publishes no metadata');
  if (!(metadata.code_challenge_methods_supported ?? []).includes('S256')) {
    throw new OAuthFailure('pkce_unsupported', 'the authorization server does not advertise PKCE with S256');
  }
  const asked = challenge.scope ?? (resourceMetadata.scopes_supported?.length ? resourceMetadata.scopes_supported.join(' ') : null);
  const offline = (metadata.scopes_supported ?? []).includes('offline_access') && !(asked ?? '').split(' ').includes('offline_access');
  const scope = offline ? [asked, 'offline_access'].filter((s) => s !== null).join(' ') : asked;
  return { resource: resourceMetadata.resource, metadata: pick(metadata), scope };
}

/** Only the fields OpenBot keeps, so a stored registration holds no more than it needs. */
function pick(m: AuthorizationServerInfo): AuthorizationServerInfo {
  return {
    issuer: m.issuer,
    authorization_endpoint: m.authorization_endpoint,
    token_endpoint: m.token_endpoint,
    ...(m.registration_endpoint === undefined ? {} : { registration_endpoint: m.registration_endpoint }),
    ...(m.revocation_endpoint === undefined ? {} : { revocation_endpoint: m.revocation_endpoint }),
    ...(m.scopes_supported === undefined ? {} : { scopes_supported: m.scopes_supported }),
    response_types_supported: m.response_types_supported,
    ...(m.code_challenge_methods_supported === undefined ? {} : { code_challenge_methods_supported: m.code_challenge_methods_supported }),
    ...(m.token_endpoint_auth_methods_supported === undefined ? {} : { token_endpoint_auth_methods_supported: m.token_endpoint_auth_methods_supported }),
    ...(m.authorization_response_iss_parameter_supported === undefined ? {} : { authorization_response_iss_parameter_supported: m.authorization_response_iss_parameter_supported }),
    ...(m.client_id_metadata_document_supported === undefined ? {} : { client_id_metadata_document_supported: m.client_id_metadata_document_supported }),
  };
}
