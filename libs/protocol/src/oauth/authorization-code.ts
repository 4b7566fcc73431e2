import { exchangeAuthorization, refreshAuthorization, registerClient, startAuthorization, type AuthorizationServerMetadata } from '@modelcontextprotocol/client';
import type { Fetch } from '../http/capped-fetch';
import type { AuthorizationServerInfo } from './discovery';
import { OAuthFailure, toOAuthFailure } from './oauth-failure';

/** An OAuth client at one authorization server: pre-registered, or registered dynamically. */
export interface OAuthClient {
  readonly client_id: string;
  readonly client_secret?: string;
  readonly token_endpoint_auth_method?: string;
}

/** A token answer as OpenBot keeps it (sealed). `expires_at` is epoch milliseconds, null when the server gave no lifetime. */
export interface TokenSet {
  readonly access_token: string;
  readonly token_type: string;
  readonly refresh_token: string | null;
  readonly scope: string | null;
  readonly expires_at: number | null;
}

/** The SDK's metadata type from the fields OpenBot keeps (its lists are mutable arrays: copied). */
const asMetadata = (m: AuthorizationServerInfo): AuthorizationServerMetadata => {
  const { scopes_supported, code_challenge_methods_supported, token_endpoint_auth_methods_supported, response_types_supported, ...rest } = m;
  return {
    ...rest,
    response_types_supported: [...response_types_supported],
    ...(scopes_supported === undefined ? {} : { scopes_supported: [...scopes_supported] }),
    ...(code_challenge_methods_supported === undefined ? {} : { code_challenge_methods_supported: [...code_challenge_methods_supported] }),
    ...(token_endpoint_auth_methods_supported === undefined ? {} : { token_endpoint_auth_methods_supported: [...token_endpoint_auth_methods_supported] }),
  };
};

/**
 * Dynamic client registration (RFC 7591), the last of the registration ways: a confidential web
 * client with the one redirect URI of this (issuer, client) registration.
 */
export async function registerDynamicClient(fetch: Fetch, metadata: AuthorizationServerInfo, options: { readonly redirectUri: string; readonly clientName: string; readonly scope: string | null }): Promise<OAuthClient> {
  if (metadata.registration_endpoint === undefined) throw new OAuthFailure('registration_failed', 'the authorization server offers no dynamic client registration, and no client is pre-registered for it');
  try {
    const registered = await registerClient(metadata.issuer, {
      metadata: asMetadata(metadata),
      clientMetadata: {
        redirect_uris: [options.redirectUri],
        client_name: options.clientName,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        application_type: 'web',
      } as never,
      ...(options.scope === null ? {} : { scope: options.scope }),
      fetchFn: fetch,
    });
    return {
      client_id: registered.client_id,
      ...(registered.client_secret === undefined ? {} : { client_secret: registered.client_secret }),
      ...(registered.token_endpoint_auth_method === undefined ? {} : { token_endpoint_auth_method: registered.token_endpoint_auth_method }),
    };
  } catch (error) {
    throw toOAuthFailure(error, 'registration');
  }
}

/**
 * The authorization URL of an authorization-code request with PKCE S256, the given `state`, the
 * RFC 8707 `resource`, the scope and `prompt=consent` (the person always sees what they grant). Answers the PKCE verifier to keep (sealed) for the exchange.
 * Sends nothing.
 */
export async function authorizationRequest(
  metadata: AuthorizationServerInfo,
  client: OAuthClient,
  options: { readonly redirectUri: string; readonly state: string; readonly resource: string; readonly scope: string | null },
): Promise<{ readonly url: string; readonly codeVerifier: string }> {
  if (!(metadata.code_challenge_methods_supported ?? []).includes('S256')) throw new OAuthFailure('pkce_unsupported', 'the authorization server does not advertise PKCE with S256');
  const { authorizationUrl, codeVerifier } = await startAuthorization(metadata.issuer, {
    metadata: asMetadata(metadata),
    clientInformation: client,
    redirectUrl: options.redirectUri,
    state: options.state,
    resource: options.resource,
    ...(options.scope === null ? {} : { scope: options.scope }),
  });
  // The resource indicator exactly as the metadata gave it (the SDK's URL form may add a slash).
  authorizationUrl.searchParams.set('resource', options.resource);
  // The client is shared by every organization at the issuer: a consent given for one must never be reused silently for another (decision 066).
  authorizationUrl.searchParams.set('prompt', 'consent');
  return { url: authorizationUrl.href, codeVerifier };
}

/**
 * Checks the `iss` of an authorization response (RFC 9207): when present it must be the
 * registration's issuer; when the server advertises the parameter it must be present.
 */
export function checkResponseIssuer(metadata: AuthorizationServerInfo, iss: string | null): void {
  if (iss === null) {
    if (metadata.authorization_response_iss_parameter_supported === true) throw new OAuthFailure('issuer_mismatch', 'the authorization response carries no iss, though the server advertises it');
    return;
  }
  if (iss !== metadata.issuer) throw new OAuthFailure('issuer_mismatch', 'the authorization response names another issuer');
}

/** Redeems an authorization code (with the PKCE verifier and the same `resource`). */
export async function exchangeCode(
  fetch: Fetch,
  metadata: AuthorizationServerInfo,
  client: OAuthClient,
  options: { readonly code: string; readonly iss: string | null; readonly codeVerifier: string; readonly redirectUri: string; readonly resource: string; readonly now: number },
): Promise<TokenSet> {
  checkResponseIssuer(metadata, options.iss);
  try {
    const tokens = await exchangeAuthorization(metadata.issuer, {
      metadata: asMetadata(metadata),
      clientInformation: client,
      authorizationCode: options.code,
      ...(options.iss === null ? {} : { iss: options.iss }),
      codeVerifier: options.codeVerifier,
      redirectUri: options.redirectUri,
      resource: options.resource,
      fetchFn: withResource(fetch, options.resource),
    });
    return tokenSet(tokens, options.now, null);
  } catch (error) {
    throw toOAuthFailure(error, 'token');
  }
}

/** Trades a refresh token for a new pair (a rotating server answers a new refresh token; else the old one stays). */
export async function refreshTokens(
  fetch: Fetch,
  metadata: AuthorizationServerInfo,
  client: OAuthClient,
  options: { readonly refreshToken: string; readonly resource: string; readonly now: number },
): Promise<TokenSet> {
  try {
    const tokens = await refreshAuthorization(metadata.issuer, {
      metadata: asMetadata(metadata),
      clientInformation: client,
      refreshToken: options.refreshToken,
      resource: options.resource,
      fetchFn: withResource(fetch, options.resource),
    });
    return tokenSet(tokens, options.now, options.refreshToken);
  } catch (error) {
    throw toOAuthFailure(error, 'token');
  }
}

/** The SDK writes the resource as a URL (`href`); the indicator is sent exactly as the metadata gave it. */
function withResource(fetch: Fetch, resource: string): Fetch {
  return (input, init) => {
    const body = init?.body;
    if (body instanceof URLSearchParams && body.has('resource')) body.set('resource', resource);
    return fetch(input, init);
  };
}

function tokenSet(tokens: { access_token: string; token_type: string; refresh_token?: string; scope?: string; expires_in?: number }, now: number, previousRefresh: string | null): TokenSet {
  return {
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    refresh_token: tokens.refresh_token ?? previousRefresh,
    scope: tokens.scope ?? null,
    expires_at: typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : null,
  };
}

/** What a revocation did: the server took it (RFC 7009 answers 200 for unknown tokens too), or there is no endpoint. */
export type RevocationResult = { readonly kind: 'revoked' } | { readonly kind: 'local_only' };

/**
 * Revokes one token at the server (RFC 7009), authenticated as the client. A server without a
 * `revocation_endpoint` gives `local_only`: nothing to send, the caller forgets the token.
 */
export async function revokeToken(fetch: Fetch, metadata: AuthorizationServerInfo, client: OAuthClient, token: { readonly value: string; readonly hint: 'refresh_token' | 'access_token' }): Promise<RevocationResult> {
  if (metadata.revocation_endpoint === undefined) return { kind: 'local_only' };
  const body = new URLSearchParams({ token: token.value, token_type_hint: token.hint });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (client.client_secret !== undefined && client.token_endpoint_auth_method !== 'client_secret_post') {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
  } else {
    body.set('client_id', client.client_id);
    if (client.client_secret !== undefined) body.set('client_secret', client.client_secret);
  }
  let response: Response;
  try {
    response = await fetch(metadata.revocation_endpoint, { method: 'POST', headers, body });
  } catch (error) {
    throw toOAuthFailure(error, 'revocation');
  }
  const text = await response.text().catch(() => '');
  if (response.ok) return { kind: 'revoked' };
  if (response.status >= 500 || response.status === 429) throw new OAuthFailure('unreachable', `the revocation endpoint answered HTTP ${response.status}`, { cause: new Error(text.slice(0, 500)) });
  throw new OAuthFailure('rejected', `the revocation endpoint answered HTTP ${response.status}`, { cause: new Error(text.slice(0, 500)) });
}
