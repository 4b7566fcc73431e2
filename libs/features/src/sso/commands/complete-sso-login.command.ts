import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, isMemberRole, isUuid, newId, Unauthenticated, type MemberId, type MemberRole, type OrganizationId } from '@openbot/domain';
import { Database, type Sql } from '../../../../platform/src/database/sql';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { IdTokenRejected, isTrue, type VerifiedIdToken } from '../id-token-verifier';
import { providerUnreachable } from '../provider-failures';
import { RelyingParties, type RelyingParty } from '../relying-party';
import { hashToken, isWellFormedToken, LOGIN_LIFETIME_SECONDS, randomToken, SESSION_LIFETIME_SECONDS } from '../session-tokens';
import { activeConfiguration, openClientSecret, type ActiveSsoConfiguration } from '../sso-configurations';
import { requirePublicUrl, ssoCallbackPath, SsoNotConfigured } from '../sso-view';

/** The query of the provider's redirect to `GET /v1/sso/{organizationId}/callback`. */
export interface SsoCallback {
  readonly code: string | null;
  readonly state: string | null;
  readonly error: string | null;
  readonly errorDescription: string | null;
  /** The RFC 9207 `iss` parameter exactly as sent (an empty one included); null when the provider sent none. */
  readonly iss: string | null;
}

export interface CompletedSsoLogin {
  readonly organizationId: OrganizationId;
  readonly memberId: MemberId;
  /** true when this login created the member (just-in-time provisioning). */
  readonly provisioned: boolean;
  /** The session cookie's value: shown once, stored only as its sha256. */
  readonly sessionToken: string;
  readonly expiresAt: Date;
  readonly returnTo: string;
  /** The organization's callback path, where the used login cookie is cleared. */
  readonly callbackPath: string;
}

interface LoginRow {
  readonly revision: number;
  readonly nonce: string;
  readonly codeVerifier: string | null;
  readonly returnTo: string;
  readonly fresh: boolean;
}

/** The identity a verified login proves. */
interface ProvenIdentity {
  readonly subject: string;
  readonly email: string;
  readonly name: string | null;
}

const LOGIN_REFUSED = 'The identity provider’s answer could not be verified; sign in again.';
const PROVIDER_REFUSED = 'The identity provider did not sign you in; start again.';

/**
 * Completes a sign-in (`GET /v1/sso/{organizationId}/callback`). The login in flight is taken out
 * of the database first (single use: a replayed state, and with it its nonce, finds nothing), but
 * only by the browser that started it and only at its own organization's callback: a state that
 * leaked to someone else, or that another organization's provider sent here, is refused without
 * being used up. The RFC 9207 `iss` parameter is checked against the organization's issuer before
 * the code is sent anywhere. passport-openidconnect then exchanges the code; the ID token's
 * signature, issuer, audience, expiry and nonce are verified here against the provider's JWKS.
 * The email must be verified and in an allowed domain. The member is found by (issuer, subject)
 * or created with the configured default role, and a session is opened — all in one transaction
 * with its audit record.
 */
export class CompleteSsoLogin extends Command<CompletedSsoLogin> {
  constructor(
    /** The organization the callback's path names: the only one whose login it may complete. */
    readonly organizationId: string,
    readonly callback: SsoCallback,
    /** The login-binding cookie the browser sent, if any. */
    readonly browserBinding: string | null,
  ) {
    super();
  }
}

@CommandHandler(CompleteSsoLogin)
export class CompleteSsoLoginHandler implements ICommandHandler<CompleteSsoLogin> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealedRecords: SealedRecords,
    @Inject(RelyingParties) private readonly relyingParties: RelyingParties,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ organizationId, callback, browserBinding }: CompleteSsoLogin): Promise<CompletedSsoLogin> {
    if (!isUuid(organizationId)) throw new SsoNotConfigured();
    const state = callback.state;
    if (state === null || !isWellFormedToken(state)) {
      throw new InvalidInput([{ path: 'state', message: 'state is missing or not one this server issued' }], 'This sign-in is not one this server started; start again.');
    }
    const login = await this.takeLogin(state, organizationId, browserBinding);
    const configuration = await activeConfiguration(this.db, organizationId);
    if (configuration === undefined) throw new SsoNotConfigured();
    if (configuration.revision !== login.revision) {
      throw new InvalidInput([{ path: 'state', message: 'the SSO configuration changed during this sign-in' }], 'The SSO configuration changed during this sign-in; start again.');
    }
    const identity = await this.verifiedIdentity(configuration, callback, { state, nonce: login.nonce, codeVerifier: login.codeVerifier });
    checkEmail(identity.email, configuration);
    return this.signIn(configuration, identity, login.returnTo);
  }

  /**
   * Deletes and returns the login in flight, but only when the state, the organization of the
   * callback's path and the browser-binding cookie all match: the deletion is the single use, so
   * nothing that fails one of these checks can use up the login of the browser that started it.
   * (The cookie is compared as a sha256 inside the lookup; a hash of a 256-bit random value leaks
   * nothing through timing.) A refused callback is then told apart without touching the row.
   */
  private async takeLogin(state: string, organizationId: string, browserBinding: string | null): Promise<LoginRow> {
    const stateHash = hashToken(state);
    if (browserBinding !== null) {
      const rows = await this.db.rows<LoginRow>(
        `DELETE FROM sso_logins WHERE state_hash = $1 AND organization_id = $2 AND browser_hash = $3
         RETURNING revision, nonce, code_verifier AS "codeVerifier", return_to AS "returnTo", created_at > now() - make_interval(secs => $4) AS fresh`,
        [stateHash, organizationId, hashToken(browserBinding), LOGIN_LIFETIME_SECONDS],
      );
      const login = rows[0];
      if (login !== undefined && login.fresh) return login;
      if (login !== undefined) throw expiredOrUsed();
    }
    const other = await this.db.one<{ sameOrganization: boolean }>(
      `SELECT organization_id = $2 AS "sameOrganization" FROM sso_logins WHERE state_hash = $1 AND created_at > now() - make_interval(secs => $3)`,
      [stateHash, organizationId, LOGIN_LIFETIME_SECONDS],
    );
    if (other === undefined) throw expiredOrUsed();
    if (!other.sameOrganization) {
      // The OIDC mix-up: a provider sent the browser here with a login of another organization, whose token endpoint must not see this code.
      throw new InvalidInput([{ path: 'state', message: 'state belongs to a sign-in of another organization' }], 'This sign-in belongs to another organization; start again.');
    }
    // Login CSRF: a callback link made for someone else's login must not sign this browser in, nor use that login up.
    throw new Forbidden('This sign-in was started in another browser; start again from the login page.');
  }

  private async verifiedIdentity(
    configuration: ActiveSsoConfiguration,
    callback: SsoCallback,
    login: { state: string; nonce: string; codeVerifier: string | null },
  ): Promise<ProvenIdentity> {
    const publicUrl = requirePublicUrl(this.config.publicUrl);
    if (callback.code === null && callback.error === null) throw new InvalidInput([{ path: 'code', message: 'code is required' }]);
    const query: Record<string, string> = { state: login.state };
    if (callback.code !== null) query.code = callback.code;
    if (callback.error !== null) query.error = callback.error;
    if (callback.errorDescription !== null) query.error_description = callback.errorDescription;
    let party: RelyingParty;
    let token: VerifiedIdToken;
    let userinfo: Readonly<Record<string, unknown>> | null;
    try {
      party = await this.relyingParties.get(
        {
          organizationId: configuration.organizationId,
          revision: configuration.revision,
          issuer: configuration.issuer,
          clientId: configuration.clientId,
          redirectUri: `${publicUrl}${ssoCallbackPath(configuration.organizationId)}`,
        },
        () => openClientSecret(this.sealedRecords, configuration),
      );
      // RFC 9207, before the code goes anywhere: an answer this provider did not issue is refused, error answers included.
      if (!party.acceptsIssuerParameter(callback.iss)) throw new Unauthenticated(LOGIN_REFUSED);
      const answer = await party.callback(query, login);
      if (answer.kind === 'refused' && callback.error !== null) throw new Unauthenticated(PROVIDER_REFUSED);
      if (answer.kind === 'refused') throw new IdTokenRejected(answer.reason);
      token = await party.verifyIdToken(answer.idToken, login.nonce);
      userinfo = answer.userinfo;
    } catch (error) {
      if (error instanceof IdTokenRejected) throw new Unauthenticated(LOGIN_REFUSED);
      // The provider said no: an error redirect (AuthorizationError) or a refused code (TokenError: invalid_grant, …).
      if (error instanceof Error && (error.name === 'AuthorizationError' || error.name === 'TokenError')) {
        throw new Unauthenticated(PROVIDER_REFUSED);
      }
      throw providerUnreachable(error) ?? error;
    }
    // OpenID Connect Core §5.3.4: userinfo must be about the ID token's subject, or it is ignored entirely.
    if (userinfo !== null && userinfo.sub !== token.subject) throw new Unauthenticated(LOGIN_REFUSED);
    const email = token.email ?? (typeof userinfo?.email === 'string' ? userinfo.email : null);
    const verified = token.email !== null ? token.emailVerified : isTrue(userinfo?.email_verified);
    const name = token.name ?? (typeof userinfo?.name === 'string' ? userinfo.name : null);
    if (email === null) throw new Forbidden('The identity provider did not share an email address; sign-in needs one.');
    if (!verified) throw new Forbidden('The identity provider has not verified this email address.');
    return { subject: token.subject, email, name };
  }

  private async signIn(configuration: ActiveSsoConfiguration, identity: ProvenIdentity, returnTo: string): Promise<CompletedSsoLogin> {
    const organizationId = configuration.organizationId as OrganizationId;
    const sessionToken = randomToken();
    return this.db.transaction(async (tx) => {
      const { memberId, provisioned } = await this.member(tx, configuration, identity);
      const sessionId = newId();
      const session = await tx.one<{ expiresAt: Date }>(
        `INSERT INTO sessions (id, organization_id, member_id, token_hash, csrf_token, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) RETURNING expires_at AS "expiresAt"`,
        [sessionId, organizationId, memberId, hashToken(sessionToken), randomToken(), SESSION_LIFETIME_SECONDS],
      );
      await recordAudit(tx, {
        organizationId,
        actor: { kind: 'sso', id: null },
        action: 'sso.login',
        target: { type: 'member', id: memberId },
        details: { issuer: configuration.issuer, subject: identity.subject, email: identity.email, provisioned, sessionId },
      });
      return { organizationId, memberId, provisioned, sessionToken, expiresAt: session!.expiresAt, returnTo, callbackPath: ssoCallbackPath(organizationId) };
    });
  }

  /** The member of this identity, created on its first sign-in (just-in-time provisioning). */
  private async member(
    tx: Sql,
    configuration: ActiveSsoConfiguration,
    identity: ProvenIdentity,
  ): Promise<{ memberId: MemberId; provisioned: boolean }> {
    const { organizationId, issuer } = configuration;
    // Two first sign-ins of one identity at once must make one member, not two.
    await tx.count(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`member-identity:${organizationId}:${issuer}:${identity.subject}`]);
    const known = await tx.one<{ memberId: MemberId; removed: boolean }>(
      `SELECT i.member_id AS "memberId", m.removed_at IS NOT NULL AS removed
         FROM member_identities i JOIN members m ON m.id = i.member_id
        WHERE i.organization_id = $1 AND i.issuer = $2 AND i.subject = $3`,
      [organizationId, issuer, identity.subject],
    );
    if (known !== undefined) {
      if (known.removed) throw new Forbidden('This member was removed from the organization.');
      await tx.count('UPDATE member_identities SET email = $4 WHERE organization_id = $1 AND issuer = $2 AND subject = $3', [
        organizationId,
        issuer,
        identity.subject,
        identity.email,
      ]);
      return { memberId: known.memberId, provisioned: false };
    }
    const role: MemberRole = isMemberRole(configuration.defaultRole) ? configuration.defaultRole : 'viewer';
    const memberId = newId<MemberId>();
    await tx.count('INSERT INTO members (id, organization_id, role, name, email) VALUES ($1, $2, $3, $4, $5)', [
      memberId,
      organizationId,
      role,
      identity.name,
      identity.email,
    ]);
    await tx.count('INSERT INTO member_identities (organization_id, issuer, subject, member_id, email) VALUES ($1, $2, $3, $4, $5)', [
      organizationId,
      issuer,
      identity.subject,
      memberId,
      identity.email,
    ]);
    return { memberId, provisioned: true };
  }
}

function expiredOrUsed(): InvalidInput {
  return new InvalidInput([{ path: 'state', message: 'this sign-in is unknown, already used or older than 10 minutes' }], 'This sign-in expired or was already used; start again.');
}

/** The address must have a domain the organization allows (compared in lower case). */
function checkEmail(email: string, configuration: ActiveSsoConfiguration): void {
  const at = email.lastIndexOf('@');
  const domain = at > 0 ? email.slice(at + 1).toLowerCase() : '';
  if (domain === '' || !configuration.allowedDomains.includes(domain)) {
    throw new Forbidden(`Email addresses of ${domain === '' ? 'this form' : domain} may not sign in to this organization.`);
  }
}
