import { Inject, Injectable } from '@nestjs/common';
import { readCappedBytes, readCappedText } from '@openbot/core';
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from 'jose';
import type { OAuth2 } from 'oauth';
import passport from 'passport';
import OpenIDConnectStrategy from 'passport-openidconnect';
import { EgressClient } from '../../../platform/src/egress/egress-client';
import { discoverProvider, type ProviderMetadata } from './oidc-discovery';
import { verifyIdToken, type VerifiedIdToken } from './id-token-verifier';
import { codeChallengeOf, randomToken, tokensEqual } from './session-tokens';
import { SSO_SCOPES } from './sso-view';

/** One organization's client at its identity provider, at one configuration revision. */
export interface RelyingPartySettings {
  readonly organizationId: string;
  readonly revision: number;
  readonly issuer: string;
  readonly clientId: string;
  readonly redirectUri: string;
}

/** The start of a login: where to send the browser, and what to keep until the callback. */
export interface AuthorizationRequest {
  readonly location: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string | null;
}

/** What the callback brings back from the provider before our own checks. */
export type ProviderAnswer =
  | { readonly kind: 'answered'; readonly idToken: string; readonly userinfo: Readonly<Record<string, unknown>> | null }
  | { readonly kind: 'refused'; readonly reason: string };

/** The login in flight the callback's state named (already consumed from the database). */
export interface LoginToComplete {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string | null;
}

/** How long a discovered provider (endpoints, key set) is trusted before it is discovered again. */
const REDISCOVER_AFTER_MS = 60 * 60 * 1000;
/** At most this many organizations' clients are kept per node; the oldest go first. */
const MAX_CACHED = 500;
const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * The request object passport and passport-openidconnect see. It is ours, not Fastify's: the
 * use cases stay free of HTTP, and passport's writes go to a response we capture (no reply shims).
 */
interface PassportRequest {
  query: Record<string, string>;
  headers: Record<string, string>;
  url: string;
  /** Set by the state store when passport builds an authorization request. */
  issued?: { readonly state: string; readonly nonce: string };
  /** The login the callback completes. */
  completing?: LoginToComplete;
  /** Ends the run with an error thrown inside a callback passport would otherwise swallow. */
  abort?: (error: unknown) => void;
}

type StoreContext = OpenIDConnectStrategy.SessionStoreContext;

/**
 * passport-openidconnect's state store, kept server-side by the use cases: at the start it only
 * hands out a fresh 256-bit state (the use case stores it, hashed, with the nonce); at the
 * callback it accepts exactly the state of the login the use case already took out of the database.
 */
const LOGIN_STATE_STORE = {
  store(req: PassportRequest, ctx: StoreContext, _appState: unknown, _meta: unknown, cb: (err: Error | null, handle?: string) => void): void {
    if (ctx.nonce === undefined) return cb(new Error('passport-openidconnect issued no nonce'));
    const state = randomToken();
    req.issued = { state, nonce: ctx.nonce };
    cb(null, state);
  },
  verify(req: PassportRequest, handle: string, cb: (err: Error | null, ctx?: false | StoreContext, state?: unknown) => void): void {
    const login = req.completing;
    if (login === undefined || typeof handle !== 'string' || !tokensEqual(handle, login.state)) {
      return cb(null, false, { message: 'Unknown or used login state.' });
    }
    cb(null, { nonce: login.nonce }, {});
  },
};

/** The callbacks the `oauth` package's client takes; passport-openidconnect passes them to us. */
type TokenCallback = (error: unknown, accessToken?: string, refreshToken?: string, result?: unknown) => void;
type DataCallback = (error: unknown, body?: string) => void;

/**
 * passport-openidconnect for one organization. Two gaps of the library are filled here: PKCE
 * (the S256 challenge goes into the authorization request, the verifier into the token request)
 * and the token and userinfo requests themselves, which go through the egress policy instead of
 * the `oauth` package's unchecked HTTP client. The ID token signature is verified by the use case
 * with `verifyIdToken` (the library does not check signatures).
 */
class OrganizationStrategy extends OpenIDConnectStrategy {
  constructor(
    options: OpenIDConnectStrategy.StrategyOptions,
    verify: OpenIDConnectStrategy.VerifyFunction,
    private readonly provider: ProviderMetadata,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly fetchImpl: typeof fetch,
    /** Largest token or userinfo answer read (OPENBOT_EGRESS_DOCUMENT_LIMIT). */
    private readonly limitBytes: number,
  ) {
    super(options, verify);
  }

  override authorizationParams(options?: { codeChallenge?: string | null }): object {
    return options?.codeChallenge ? { code_challenge: options.codeChallenge, code_challenge_method: 'S256' } : {};
  }

  /**
   * Runs on a per-request `Object.create(strategy)`, so the client set here belongs to this
   * request alone: it knows the request's PKCE verifier, and concurrent logins never share it.
   */
  override authenticate(request: Parameters<OpenIDConnectStrategy['authenticate']>[0], options?: OpenIDConnectStrategy.AuthenticateOptions): void {
    // The library's type names Express's request; it is our PassportRequest (it reads `query`, `headers`, `url`).
    const req = request as unknown as PassportRequest;
    const client = Object.create(this._oauth2) as OAuth2;
    // passport-openidconnect calls these from plain callbacks: a throw there would be lost, so it ends the run instead.
    const deliver = (run: () => void): void => {
      try {
        run();
      } catch (error) {
        req.abort?.(error);
      }
    };
    client.getOAuthAccessToken = ((code: string, params: Record<string, string>, callback: TokenCallback): void => {
      this.exchangeCode(code, params, req.completing?.codeVerifier ?? null).then(
        (answer) =>
          deliver(() =>
            answer.ok
              ? callback(null, stringOrUndefined(answer.json.access_token), stringOrUndefined(answer.json.refresh_token), answer.json)
              : // The shape the library turns into a TokenError (invalid_grant and friends).
                callback({ statusCode: answer.status, data: answer.text }),
          ),
        (error: unknown) => deliver(() => callback(error)),
      );
    }) as unknown as OAuth2['getOAuthAccessToken'];
    client.get = ((url: string, accessToken: string, callback: DataCallback): void => {
      this.fetchUserinfo(url, accessToken).then(
        (body) => deliver(() => callback(null, body)),
        (error: unknown) => deliver(() => callback(error)),
      );
    }) as unknown as OAuth2['get'];
    this._oauth2 = client;
    super.authenticate(request, options);
  }

  /** The token request (RFC 6749 §4.1.3) with the client's authentication method and the PKCE verifier. */
  private async exchangeCode(
    code: string,
    params: Record<string, string>,
    codeVerifier: string | null,
  ): Promise<{ ok: true; json: Record<string, unknown> } | { ok: false; status: number; text: string }> {
    const body = new URLSearchParams({ ...params, code });
    if (codeVerifier !== null) body.set('code_verifier', codeVerifier);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.provider.tokenEndpointAuthMethod === 'client_secret_basic') {
      // RFC 6749 §2.3.1: both parts form-encoded before base64.
      const credentials = `${formEncode(this.clientId)}:${formEncode(this.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
    } else {
      body.set('client_id', this.clientId);
      body.set('client_secret', this.clientSecret);
    }
    const response = await this.fetchImpl(this.provider.tokenEndpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
    const text = await readCappedText(response, this.limitBytes, 'the token answer');
    if (!response.ok) return { ok: false, status: response.status, text };
    const json = JSON.parse(text) as unknown;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('the token endpoint answered no JSON object');
    return { ok: true, json: json as Record<string, unknown> };
  }

  private async fetchUserinfo(url: string, accessToken: string): Promise<string> {
    const response = await this.fetchImpl(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`the userinfo endpoint answered HTTP ${response.status}`);
    return readCappedText(response, this.limitBytes, 'the userinfo answer');
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

type RunOutcome = { kind: 'redirect'; location: string } | { kind: 'success'; user: unknown } | { kind: 'refused'; reason: string };

/** One organization's relying party, at one configuration revision: its strategy and its provider's keys. */
export class RelyingParty {
  constructor(
    private readonly authenticator: passport.Authenticator,
    private readonly strategy: OrganizationStrategy,
    readonly settings: RelyingPartySettings,
    readonly provider: ProviderMetadata,
    private readonly keys: JWTVerifyGetKey,
  ) {}

  /** Builds the redirect to the provider: code flow, `openid email profile`, state, nonce, PKCE S256 when listed. */
  async authorizationRequest(): Promise<AuthorizationRequest> {
    const codeVerifier = this.provider.pkce ? randomToken() : null;
    const req: PassportRequest = { query: {}, headers: {}, url: '/' };
    const outcome = await this.run(req, { codeChallenge: codeVerifier === null ? null : codeChallengeOf(codeVerifier) });
    if (outcome.kind !== 'redirect' || req.issued === undefined) throw new Error('passport-openidconnect did not redirect to the provider');
    return { location: outcome.location, state: req.issued.state, nonce: req.issued.nonce, codeVerifier };
  }

  /**
   * Runs the callback through passport-openidconnect: the provider's error answer, the state
   * check, the token request and the library's claim checks. A refusal is a failed login; a
   * thrown error is a provider or server fault.
   */
  async callback(query: Record<string, string>, login: LoginToComplete): Promise<ProviderAnswer> {
    const req: PassportRequest = { query, headers: {}, url: '/', completing: login };
    const outcome = await this.run(req, {});
    switch (outcome.kind) {
      case 'success':
        return { kind: 'answered', ...(outcome.user as { idToken: string; userinfo: Record<string, unknown> | null }) };
      case 'refused':
        return { kind: 'refused', reason: outcome.reason };
      case 'redirect':
        throw new Error('passport-openidconnect redirected during a callback');
    }
  }

  /**
   * RFC 9207 §2.4: the authorization response's `iss` must be this provider's issuer, compared as
   * plain strings, whenever it is there; a provider that advertises the parameter must send it.
   * Checked before the code goes anywhere, so a response another provider produced (a mix-up)
   * never reaches this provider's token endpoint. `null` means the callback carried no `iss`.
   */
  acceptsIssuerParameter(iss: string | null): boolean {
    if (iss === null) return !this.provider.issParameter;
    return iss === this.provider.issuer;
  }

  /** Verifies the ID token with the provider's key set (fetched through the egress policy). */
  verifyIdToken(idToken: string, nonce: string): Promise<VerifiedIdToken> {
    return verifyIdToken(idToken, { issuer: this.settings.issuer, clientId: this.settings.clientId, nonce }, this.keys);
  }

  /**
   * One passport run. passport augments the strategy object it is given with this request's
   * success/fail/redirect actions, so each run gets its own `Object.create(strategy)` (what
   * passport does itself for registered strategies) and concurrent logins never share one.
   */
  private run(req: PassportRequest, options: object): Promise<RunOutcome> {
    return new Promise<RunOutcome>((resolve, reject) => {
      let location: string | null = null;
      // passport writes its redirect onto a Node-style response; this one only records it.
      const res = {
        statusCode: 200,
        setHeader(name: string, value: unknown): void {
          if (name.toLowerCase() === 'location') location = String(value);
        },
        end(): void {
          if (location === null) reject(new Error('passport ended the response without a redirect'));
          else resolve({ kind: 'redirect', location });
        },
      };
      req.abort = (error: unknown) => reject(error instanceof Error ? error : new Error(String(error)));
      const onDecision = (error: unknown, user: unknown, info: unknown): void => {
        if (error) return req.abort!(error);
        if (user) return resolve({ kind: 'success', user });
        const message = (info as { message?: unknown } | undefined)?.message;
        resolve({ kind: 'refused', reason: typeof message === 'string' ? message : 'refused' });
      };
      const perRequest = Object.create(this.strategy) as OrganizationStrategy;
      const middleware = this.authenticator.authenticate(perRequest, { session: false, ...options }, onDecision) as (
        req: PassportRequest,
        res: unknown,
        next: (error?: unknown) => void,
      ) => void;
      try {
        middleware(req, res, (error?: unknown) => req.abort!(error ?? new Error('passport passed the request on without a decision')));
      } catch (error) {
        req.abort(error);
      }
    });
  }
}

/**
 * The relying parties of the organizations this node has served, one passport-openidconnect
 * strategy each (the library takes one issuer per strategy). Cached by (organization, revision):
 * a configuration change makes a new revision, so an old strategy is never used again, on this
 * node or any other. The provider is discovered again after an hour.
 */
@Injectable()
export class RelyingParties {
  private readonly authenticator = new passport.Passport();
  private readonly cached = new Map<string, { readonly loadedAt: number; readonly party: Promise<RelyingParty> }>();
  private readonly fetchImpl: typeof fetch;
  private readonly limitBytes: number;

  constructor(@Inject(EgressClient) egress: EgressClient) {
    this.fetchImpl = egress.fetch;
    this.limitBytes = egress.limits.documentBytes;
  }

  /** The relying party of this configuration revision; `clientSecret` is only opened on a cache miss. */
  get(settings: RelyingPartySettings, clientSecret: () => Promise<string>): Promise<RelyingParty> {
    const key = `${settings.organizationId}:${settings.revision}`;
    const hit = this.cached.get(key);
    if (hit !== undefined && Date.now() - hit.loadedAt < REDISCOVER_AFTER_MS) return hit.party;
    for (const old of [...this.cached.keys()]) if (old.startsWith(`${settings.organizationId}:`)) this.cached.delete(old);
    const party = this.build(settings, clientSecret);
    this.cached.set(key, { loadedAt: Date.now(), party });
    // A failed discovery is not kept: the next login tries again.
    party.catch(() => {
      if (this.cached.get(key)?.party === party) this.cached.delete(key);
    });
    while (this.cached.size > MAX_CACHED) {
      const oldest = this.cached.keys().next().value;
      if (oldest === undefined) break;
      this.cached.delete(oldest);
    }
    return party;
  }

  private async build(settings: RelyingPartySettings, clientSecret: () => Promise<string>): Promise<RelyingParty> {
    const provider = await discoverProvider(settings.issuer, this.fetchImpl, this.limitBytes);
    const secret = await clientSecret();
    const { fetchImpl, limitBytes } = this;
    const keys = createRemoteJWKSet(new URL(provider.jwksUri), {
      timeoutDuration: PROVIDER_TIMEOUT_MS,
      // jose reads the key set itself: hand it a body already read under the cap (AnswerTooLarge otherwise).
      [customFetch]: async (url: string, options: RequestInit) => {
        const response = await fetchImpl(url, options);
        const body = await readCappedBytes(response, limitBytes, 'the key set');
        return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
      },
    });
    // Arity 9 without the request: passport-openidconnect then passes the userinfo profile apart.
    const verify = (
      _issuer: string,
      userinfo: { _json?: Record<string, unknown> } | undefined,
      _idProfile: object,
      _context: object,
      idToken: string | object,
      _accessToken: string | object,
      _refreshToken: string,
      _params: unknown,
      done: OpenIDConnectStrategy.VerifyCallback,
    ): void => {
      // Nothing is trusted yet: the use case verifies the ID token's signature and nonce next.
      done(null, { idToken: String(idToken), userinfo: userinfo?._json ?? null } as Express.User);
    };
    const strategy = new OrganizationStrategy(
      {
        issuer: settings.issuer,
        authorizationURL: provider.authorizationEndpoint,
        tokenURL: provider.tokenEndpoint,
        userInfoURL: provider.userinfoEndpoint ?? '',
        callbackURL: settings.redirectUri,
        clientID: settings.clientId,
        clientSecret: secret,
        scope: SSO_SCOPES.filter((scope) => scope !== 'openid'),
        // Any truthy value: the library then sends a fresh random nonce and hands it to the state store.
        nonce: 'true',
        store: LOGIN_STATE_STORE as never,
        // Ask the userinfo endpoint only when the ID token lacks the email claims (some providers keep them there).
        skipUserProfile: ((_req: unknown, claims: Record<string, unknown>) =>
          provider.userinfoEndpoint === null || (typeof claims.email === 'string' && claims.email_verified !== undefined)) as never,
      },
      verify as OpenIDConnectStrategy.VerifyFunction,
      provider,
      settings.clientId,
      secret,
      fetchImpl,
      limitBytes,
    );
    return new RelyingParty(this.authenticator, strategy, settings, provider, keys);
  }
}
