import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error -- oidc-provider 9 ships no type declarations; the few calls used here are typed below.
import ProviderModule from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { memoryAdapter } from './oidc-provider';

/**
 * An OAuth 2.1 authorization server for App tests: oidc-provider on loopback (in-memory), with
 * dynamic client registration (RFC 7591), resource indicators (RFC 8707, opaque access tokens
 * bound to the resource), PKCE S256 required, refresh tokens rotated on every use with reuse
 * detection that revokes the whole grant (oidc-provider's default), revocation (RFC 7009) and
 * the `iss` authorization response parameter (RFC 9207). The login and consent interactions are
 * a tiny handler that signs in the account chosen with `signInAs` and grants what was asked.
 */
export interface TestAuthorizationServer {
  readonly issuer: string;
  /** Paths (with queries) of every request, in order. */
  readonly requests: string[];
  /** Bodies of token requests, by grant type: `refresh_token` counts the refreshes. */
  readonly tokenRequests: Array<{ grantType: string; resource: string | null }>;
  /** Revocation requests seen (token type hints). */
  readonly revocations: string[];
  /** Client ID Metadata Documents the server fetched (with `metadataDocuments`): the URL and what it read. */
  readonly metadataDocumentFetches: Array<{ readonly url: string; readonly status: number; readonly document: unknown }>;
  signInAs(accountId: string): void;
  /** Looks up an access token: its account, client, audience, expiry (seconds) — what the resource server's verifier uses. */
  findAccessToken(token: string): Promise<{ accountId: string; clientId: string; aud: string | null; scope: string; exp: number } | null>;
  /** Changes the discovery documents as a misconfigured or hostile server would. */
  rewriteDiscovery(rewrite: ((document: Record<string, unknown>) => void) | null): void;
  /**
   * Answers requests to a path with a status and OAuth error instead (a failing revocation
   * endpoint, an `invalid_grant`), or drops the connection without an answer (`drop`: a lost
   * reply); null restores.
   */
  failPath(path: string, failure: { readonly status: number; readonly error: string } | 'drop' | null): void;
  /** Holds requests to a path until `release` settles (a refresh in flight while other nodes get their 401s); null stops holding. */
  hold(path: string, release: Promise<unknown> | null): void;
  close(): Promise<void>;
}

interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: { path: string; body: unknown }, next: () => Promise<void>) => Promise<void>): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; grantId?: string; prompt: { name: string; details: Record<string, unknown> }; params: Record<string, unknown>; session?: { accountId: string } }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  Grant: (new (init: { clientId: string; accountId: string }) => OidcGrant) & { find(id: string): Promise<OidcGrant | undefined> };
  AccessToken: { find(token: string): Promise<{ accountId: string; clientId: string; aud?: string | string[]; scope?: string; exp: number; isExpired: boolean } | undefined> };
}
interface OidcGrant {
  addOIDCScope(scope: string): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}
const Provider = ProviderModule as new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

/** A client registered at the server beforehand (an operator's pre-registration). */
export interface StaticClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
}

export interface AuthorizationServerOptions {
  readonly scopes?: readonly string[];
  readonly revocation?: boolean;
  readonly clients?: readonly StaticClient[];
  /**
   * Accept Client ID Metadata Documents (oidc-provider's `clientIdMetadataDocument` feature, which
   * advertises `client_id_metadata_document_supported`): an https `client_id` is fetched, for real,
   * trusting this extra CA (PEM), the test TLS fixture. oidc-provider's own fetch refuses loopback
   * addresses (its SSRF guard), so this server fetches with its own dispatcher.
   */
  readonly metadataDocuments?: { readonly ca: string };
}

export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<TestAuthorizationServer> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: `as-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' };
  const scopes = options.scopes ?? ['tools'];
  let account = 'ana';
  let rewrite: ((document: Record<string, unknown>) => void) | null = null;
  const failing = new Map<string, { readonly status: number; readonly error: string } | 'drop'>();
  const requests: string[] = [];
  const held = new Map<string, Promise<unknown>>();
  const tokenRequests: TestAuthorizationServer['tokenRequests'] = [];
  const revocations: string[] = [];
  const metadataDocumentFetches: TestAuthorizationServer['metadataDocumentFetches'] = [];
  const documentFetcher = options.metadataDocuments === undefined ? null : new Agent({ connect: { ca: options.metadataDocuments.ca } });

  const provider = new Provider(issuer, {
    adapter: memoryAdapter().Adapter,
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    scopes: ['openid', 'offline_access', ...scopes],
    clients: (options.clients ?? []).map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [...c.redirectUris],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      ...(documentFetcher === null ? {} : { clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } }),
      revocation: { enabled: options.revocation ?? true, allowedPolicy: async () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({ scope: scopes.join(' '), audience: resourceIndicator, accessTokenTTL: 600, accessTokenFormat: 'opaque' }),
      },
    },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    // Every refresh rotates the refresh token; a rotated one used again revokes the whole grant.
    rotateRefreshToken: () => true,
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, Interaction: 600, Session: 3600, RefreshToken: 3600, Client: 3600 },
    clientBasedCORS: () => false,
    ...(documentFetcher === null
      ? {}
      : {
          fetch: async (url: string, init: RequestInit) => {
            const { dispatcher: _ignored, ...rest } = init as RequestInit & { dispatcher?: unknown };
            const response = (await undiciFetch(url, { ...(rest as object), dispatcher: documentFetcher })) as unknown as Response;
            const text = await response.clone().text();
            let document: unknown = text;
            try {
              document = JSON.parse(text);
            } catch {
              // kept as text
            }
            metadataDocumentFetches.push({ url, status: response.status, document });
            return response;
          },
        }),
  });
  provider.use(async (ctx, next) => {
    await next();
    const params = (ctx as unknown as { oidc?: { params?: Record<string, unknown> } }).oidc?.params;
    if (ctx.path === '/token' && params !== undefined) tokenRequests.push({ grantType: String(params.grant_type ?? ''), resource: typeof params.resource === 'string' ? params.resource : null });
    if (ctx.path === '/token/revocation' && params !== undefined) revocations.push(String(params.token_type_hint ?? ''));
    if (rewrite !== null && (ctx.path === '/.well-known/openid-configuration' || ctx.path === '/.well-known/oauth-authorization-server')) rewrite(ctx.body as Record<string, unknown>);
  });
  const callback = provider.callback();

  handler = (req, res) => {
    requests.push(req.url ?? '');
    void (async () => {
      try {
        const path = (req.url ?? '').split('?')[0]!;
        const holding = held.get(path);
        if (holding !== undefined) await holding;
        const failure = failing.get(path);
        if (failure === 'drop') return void req.socket.destroy();
        if (failure !== undefined) return void res.writeHead(failure.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: failure.error }));
        if (!path.startsWith('/interaction/')) return callback(req, res);
        const details = await provider.interactionDetails(req, res);
        if (details.prompt.name === 'login') {
          await provider.interactionFinished(req, res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
          return;
        }
        const accountId = details.session?.accountId ?? account;
        const grant = details.grantId !== undefined ? ((await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId: String(details.params.client_id) })) : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
        const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        for (const [indicator, wanted] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, wanted.join(' '));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      } catch (error) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      }
    })();
  };

  return {
    issuer,
    requests,
    tokenRequests,
    revocations,
    metadataDocumentFetches,
    signInAs(id) {
      account = id;
    },
    async findAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (found === undefined || found.isExpired) return null;
      const aud = Array.isArray(found.aud) ? (found.aud[0] ?? null) : (found.aud ?? null);
      return { accountId: found.accountId, clientId: found.clientId, aud, scope: found.scope ?? '', exp: found.exp };
    },
    rewriteDiscovery(next) {
      rewrite = next;
    },
    hold(path, release) {
      if (release === null) held.delete(path);
      else held.set(path, release);
    },
    failPath(path, failure) {
      if (failure === null) failing.delete(path);
      else failing.set(path, failure);
    },
    async close() {
      await documentFetcher?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
