import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error -- oidc-provider 9 ships no type declarations; the few calls used here are typed below.
import ProviderModule from 'oidc-provider';

/** An account of the test identity provider: the claims it releases for `openid email profile`. */
export interface TestAccount {
  readonly sub: string;
  readonly email: string;
  readonly email_verified: boolean;
  readonly name: string;
}

export interface TestIdentityProvider {
  /** `http://127.0.0.1:<port>`: the issuer identifier and base URL. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The provider's own signing key (its JWKS publishes the public half), for tests that sign tokens as the provider. */
  readonly signingKey: { readonly kid: string; readonly alg: 'RS256'; readonly privateKey: CryptoKey };
  /** Paths and queries of every request the provider received, in order. */
  readonly requests: string[];
  /** Which account the next interaction signs in; `deny` makes the provider answer access_denied. */
  signInAs(account: string | 'deny'): void;
  /** Adds a redirect URI to the client (each organization has its own: `<app public URL>/v1/sso/{organizationId}/callback`). */
  registerRedirectUri(uri: string): void;
  /**
   * Puts a handler in front of the provider, as the admin of a provider they control could: it
   * sees every request first and answers it by returning true; false passes the request on. null removes it.
   */
  intercept(handler: InterceptHandler | null): void;
  close(): Promise<void>;
}

/** A hostile front of a provider: answers a request (and returns true) or leaves it to the provider. */
export type InterceptHandler = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

export interface TestIdentityProviderOptions {
  /** The relying party's redirect URIs known at start; more with `registerRedirectUri`. */
  readonly redirectUris?: readonly string[];
  readonly accounts: readonly TestAccount[];
  /** Refuse authorization requests without PKCE (proves the relying party sends it). Default true. */
  readonly pkceRequired?: boolean;
  /**
   * Put the email and profile claims into the ID token. Default false: like many providers, the
   * ID token then carries only `sub` and the relying party must ask the userinfo endpoint.
   */
  readonly claimsInIdToken?: boolean;
  /**
   * List `authorization_response_iss_parameter_supported` in the discovery document (RFC 9207).
   * Default true, as oidc-provider does; false stands for a provider that does not advertise it.
   */
  readonly advertiseIssParameter?: boolean;
}

/** The parts of oidc-provider's API this helper uses. */
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: { path: string; body: unknown }, next: () => Promise<void>) => Promise<void>): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; prompt: { name: string } }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  Grant: new (init: { clientId: string; accountId: string }) => OidcGrant;
}
interface OidcGrant {
  addOIDCScope(scope: string): void;
  save(): Promise<string>;
}
interface OidcContext {
  oidc: {
    client: { clientId: string };
    session: { accountId: string; grantIdFor(clientId: string): string | undefined };
    result?: { consent?: { grantId?: string } };
    provider: { Grant: OidcProvider['Grant'] & { find(id: string): Promise<OidcGrant | undefined> } };
  };
}
const Provider = ProviderModule as new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/**
 * oidc-provider's storage, in memory for one provider (its own stand-in warns and is shared by
 * every provider of the process; the OAuth authorization server of test/support uses it too). `put` writes a record directly (the client lives here, so its
 * redirect URIs can grow).
 */
export function memoryAdapter(): { Adapter: new (model: string) => unknown; put(model: string, id: string, payload: Payload): void } {
  const store = new Map<string, { payload: Payload; expiresAt: number | null }>();
  const live = (key: string): Payload | undefined => {
    const entry = store.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      store.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  const Adapter = class MemoryAdapter {
    constructor(private readonly model: string) {}
    private key(id: string): string {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      store.set(this.key(id), { payload: { ...payload }, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : null });
    }
    async find(id: string): Promise<Payload | undefined> {
      return live(this.key(id));
    }
    async findByUid(uid: string): Promise<Payload | undefined> {
      for (const key of store.keys()) if (key.startsWith(`${this.model}:`) && live(key)?.uid === uid) return live(key);
      return undefined;
    }
    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      for (const key of store.keys()) if (key.startsWith(`${this.model}:`) && live(key)?.userCode === userCode) return live(key);
      return undefined;
    }
    async consume(id: string): Promise<void> {
      const payload = live(this.key(id));
      if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> {
      store.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      for (const [key, entry] of [...store.entries()]) if (entry.payload.grantId === grantId) store.delete(key);
    }
  };
  return { Adapter, put: (model, id, payload) => store.set(`${model}:${id}`, { payload: { ...payload }, expiresAt: null }) };
}

/**
 * A real OpenID provider (oidc-provider, in-memory adapter) on loopback with one confidential
 * client. Its interaction (login) page is a tiny handler on the same server that signs in the
 * account chosen with `signInAs` — no HTML form to scrape. Consent is implied for the client.
 */
export async function startOidcProvider(options: TestIdentityProviderOptions): Promise<TestIdentityProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `test-${randomBytes(4).toString('hex')}`;
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const accounts = new Map(options.accounts.map((account) => [account.sub, account]));
  const clientId = 'openbot-test';
  const clientSecret = randomBytes(24).toString('base64url');
  let next: string = options.accounts[0]?.sub ?? 'deny';
  const requests: string[] = [];
  let interceptor: InterceptHandler | null = null;

  // The client is read from the adapter on every request (oidc-provider caches it by its content), so a new redirect URI applies at once.
  const adapter = memoryAdapter();
  const redirectUris = [...(options.redirectUris ?? [])];
  const saveClient = (): void =>
    adapter.put('Client', clientId, {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [...redirectUris],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
  saveClient();

  const provider = new Provider(issuer, {
    adapter: adapter.Adapter,
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      return account === undefined ? undefined : { accountId: id, claims: () => ({ ...account }) };
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => options.pkceRequired ?? true },
    // The client is first-party here: its consent to `openid email profile` is implied.
    loadExistingGrant: async (ctx: OidcContext) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId !== undefined) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    conformIdTokenClaims: !(options.claimsInIdToken ?? false),
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    clientBasedCORS: () => false,
  });
  if (options.advertiseIssParameter === false) {
    provider.use(async (ctx, nextMiddleware) => {
      await nextMiddleware();
      if (ctx.path === '/.well-known/openid-configuration') delete (ctx.body as Record<string, unknown>).authorization_response_iss_parameter_supported;
    });
  }
  const callback = provider.callback();

  handler = (req, res) => {
    requests.push(req.url ?? '');
    void (async () => {
      try {
        if (interceptor !== null && (await interceptor(req, res))) return;
        if (!(req.url ?? '').startsWith('/interaction/')) return callback(req, res);
        const details = await provider.interactionDetails(req, res);
        const result =
          next === 'deny'
            ? { error: 'access_denied', error_description: 'The user said no.' }
            : details.prompt.name === 'login'
              ? { login: { accountId: next } }
              : { consent: {} };
        await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      }
    })();
  };

  return {
    issuer,
    clientId,
    clientSecret,
    signingKey: { kid, alg: 'RS256', privateKey },
    requests,
    signInAs(account) {
      next = account;
    },
    registerRedirectUri(uri) {
      if (!redirectUris.includes(uri)) redirectUris.push(uri);
      saveClient();
    },
    intercept(handlerOrNull) {
      interceptor = handlerOrNull;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A browser, as far as sign-in needs one: follows redirects one by one across hosts and keeps
 * cookies like a browser does (per host, whatever the port; Path prefix; Max-Age/Expires).
 * Every hop is recorded so tests can look at each answer.
 */
export class TestBrowser {
  private readonly jar = new Map<string, Map<string, { value: string; path: string; expires: number | null }>>();
  readonly hops: Array<{ url: string; status: number; location: string | null; setCookies: string[] }> = [];

  /** Sends one request with this browser's cookies and stores the cookies it sets. */
  async request(url: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const target = new URL(url);
    const cookie = this.cookieHeader(target);
    const response = await fetch(target, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { ...(cookie === '' ? {} : { cookie }), ...init.headers },
    });
    const setCookies = response.headers.getSetCookie();
    for (const header of setCookies) this.store(target, header);
    this.hops.push({ url, status: response.status, location: response.headers.get('location'), setCookies });
    return response;
  }

  /**
   * Follows redirects from `url` until an answer that is not a redirect, or until `stopAt`
   * matches the next URL (not requested then). Returns the last response and the URL it came from.
   */
  async navigate(url: string, stopAt?: (next: URL) => boolean): Promise<{ url: string; response: Response | null; stoppedAt: string | null }> {
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      const response = await this.request(current);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null) return { url: current, response, stoppedAt: null };
      await response.arrayBuffer();
      const next = new URL(location, current);
      if (stopAt?.(next)) return { url: current, response: null, stoppedAt: next.href };
      current = next.href;
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }

  /** The value of a cookie this browser would send to `url`, or undefined. */
  cookie(url: string, name: string): string | undefined {
    const target = new URL(url);
    const entry = this.jar.get(target.hostname)?.get(name);
    if (entry === undefined || !this.live(entry) || !target.pathname.startsWith(entry.path)) return undefined;
    return entry.value;
  }

  /** Puts a cookie into this browser as if `url`'s server had set it (a session this browser signed in with before). */
  put(url: string, name: string, value: string, path = '/'): void {
    const host = new URL(url).hostname;
    const cookies = this.jar.get(host) ?? new Map<string, { value: string; path: string; expires: number | null }>();
    cookies.set(name, { value, path, expires: null });
    this.jar.set(host, cookies);
  }

  /** Forgets one cookie (a different browser, or a user clearing it). */
  drop(url: string, name: string): void {
    this.jar.get(new URL(url).hostname)?.delete(name);
  }

  private cookieHeader(target: URL): string {
    const cookies = this.jar.get(target.hostname) ?? new Map();
    return [...cookies.entries()]
      .filter(([, entry]) => this.live(entry) && target.pathname.startsWith(entry.path))
      .map(([name, entry]) => `${name}=${entry.value}`)
      .join('; ');
  }

  private live(entry: { expires: number | null }): boolean {
    return entry.expires === null || entry.expires > Date.now();
  }

  private store(origin: URL, header: string): void {
    const [pair, ...attributes] = header.split(';').map((part) => part.trim());
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq);
    const value = pair!.slice(eq + 1);
    let path = '/';
    let expires: number | null = null;
    for (const attribute of attributes) {
      const [key, ...rest] = attribute.split('=');
      const text = rest.join('=');
      switch (key!.toLowerCase()) {
        case 'path':
          path = text;
          break;
        case 'max-age':
          expires = Date.now() + Number(text) * 1000;
          break;
        case 'expires':
          expires ??= Date.parse(text);
          break;
      }
    }
    const cookies = this.jar.get(origin.hostname) ?? new Map();
    this.jar.set(origin.hostname, cookies);
    if (expires !== null && expires <= Date.now()) cookies.delete(name);
    else cookies.set(name, { value, path, expires });
  }
}
