import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { providerUnreachable } from '../provider-failures';
import { RelyingParties } from '../relying-party';
import { hashToken, LOGIN_LIFETIME_SECONDS, randomToken } from '../session-tokens';
import { activeConfiguration, openClientSecret } from '../sso-configurations';
import { requirePublicUrl, ssoCallbackPath, SsoNotConfigured } from '../sso-view';

export interface BegunSsoLogin {
  /** The provider's authorization URL the browser is sent to. */
  readonly location: string;
  /** The value of the short-lived cookie that ties the callback to this browser (login CSRF). */
  readonly browserBinding: string;
  readonly lifetimeSeconds: number;
  /** The organization's callback path: the login cookie is scoped to it, so no other organization's callback receives it. */
  readonly callbackPath: string;
}

/** Where a login returns to when the caller named no acceptable place. */
export const DEFAULT_RETURN_TO = '/v1/me';

/**
 * Starts a member's sign-in with the organization's identity provider
 * (`GET /v1/sso/{organizationId}/login`): discovers the provider through the egress policy, builds
 * the authorization request with passport-openidconnect (code flow, state, nonce, PKCE S256 when
 * the provider lists it) and keeps the login in flight server-side for 10 minutes, single use.
 * An unknown, malformed or SSO-less organization is 404 SsoNotConfigured alike.
 */
export class BeginSsoLogin extends Command<BegunSsoLogin> {
  constructor(
    readonly organizationId: string,
    readonly returnTo: string | null,
  ) {
    super();
  }
}

@CommandHandler(BeginSsoLogin)
export class BeginSsoLoginHandler implements ICommandHandler<BeginSsoLogin> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealedRecords: SealedRecords,
    @Inject(RelyingParties) private readonly relyingParties: RelyingParties,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ organizationId, returnTo }: BeginSsoLogin): Promise<BegunSsoLogin> {
    if (!isUuid(organizationId)) throw new SsoNotConfigured();
    const configuration = await activeConfiguration(this.db, organizationId);
    if (configuration === undefined) throw new SsoNotConfigured();
    const publicUrl = requirePublicUrl(this.config.publicUrl);
    // The stored ID, not the path's spelling of it (UUIDs match case-insensitively, cookie paths do not).
    const callbackPath = ssoCallbackPath(configuration.organizationId);
    let request;
    try {
      const party = await this.relyingParties.get(
        {
          organizationId: configuration.organizationId,
          revision: configuration.revision,
          issuer: configuration.issuer,
          clientId: configuration.clientId,
          redirectUri: `${publicUrl}${callbackPath}`,
        },
        () => openClientSecret(this.sealedRecords, configuration),
      );
      request = await party.authorizationRequest();
    } catch (error) {
      throw providerUnreachable(error) ?? error;
    }
    const browserBinding = randomToken();
    // Expired logins of any organization go as new ones arrive (the table stays small).
    await this.db.count(`DELETE FROM sso_logins WHERE created_at < now() - make_interval(secs => $1)`, [LOGIN_LIFETIME_SECONDS]);
    await this.db.count(
      `INSERT INTO sso_logins (state_hash, organization_id, revision, browser_hash, nonce, code_verifier, return_to) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [hashToken(request.state), configuration.organizationId, configuration.revision, hashToken(browserBinding), request.nonce, request.codeVerifier, safeReturnTo(returnTo)],
    );
    return { location: request.location, browserBinding, lifetimeSeconds: LOGIN_LIFETIME_SECONDS, callbackPath };
  }
}

/**
 * Only a path of this server: one leading `/`, not `//` or `/\` (both mean another host to a
 * browser), no control characters. Anything else returns to DEFAULT_RETURN_TO (no open redirect).
 */
export function safeReturnTo(value: string | null): string {
  if (value === null || value.length > 2000) return DEFAULT_RETURN_TO;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return DEFAULT_RETURN_TO;
  if ([...value].some((c) => c <= '\u001f' || c === '\u007f' || c === '\\')) return DEFAULT_RETURN_TO;
  // The browser resolves the path against our origin; it must stay there.
  const resolved = new URL(value, 'http://openbot.invalid');
  return resolved.origin === 'http://openbot.invalid' ? value : DEFAULT_RETURN_TO;
}
