import { Conflict, NotFound, type MemberId, type MemberRole, type OrganizationId } from '@openbot/domain';

/** The sealed record purpose of an organization's OpenID Connect client secret (SEC-01). */
export const SSO_CLIENT_SECRET_PURPOSE = 'sso.client-secret';

/** Roles a member may get at first sign-in; `owner` is never handed out by an identity provider. */
export const SSO_DEFAULT_ROLES = ['member', 'viewer', 'admin'] as const satisfies readonly MemberRole[];
export type SsoDefaultRole = (typeof SSO_DEFAULT_ROLES)[number];

/** The scopes every login asks for. */
export const SSO_SCOPES = ['openid', 'email', 'profile'] as const;

/**
 * The path an organization's identity provider redirects back to: one per organization, so the
 * callback's path, not only its `state`, names whose token endpoint may receive the code (a shared
 * URI let one organization's provider relay another's code to itself: the OIDC mix-up, decision 015).
 */
export function ssoCallbackPath(organizationId: string): string {
  return `/v1/sso/${organizationId}/callback`;
}

/** What the API shows of a configuration: never the client secret, nor where it is sealed. */
export interface SsoConfigurationView {
  readonly organizationId: OrganizationId;
  readonly issuer: string;
  readonly clientId: string;
  readonly allowedDomains: readonly string[];
  readonly defaultRole: SsoDefaultRole;
  readonly revision: number;
  /** The redirect URI to register at the identity provider; null while OPENBOT_PUBLIC_URL is unset. */
  readonly redirectUri: string | null;
  /** Where members start signing in; null while OPENBOT_PUBLIC_URL is unset. */
  readonly loginUrl: string | null;
  readonly updatedAt: Date;
}

/** The stored columns of a view; the URLs come from the server's public URL. */
export type SsoConfigurationRow = Omit<SsoConfigurationView, 'redirectUri' | 'loginUrl'>;

export const SSO_CONFIGURATION_COLUMNS = `organization_id AS "organizationId", issuer, client_id AS "clientId",
  allowed_domains AS "allowedDomains", default_role AS "defaultRole", revision, updated_at AS "updatedAt"`;

export function toSsoConfigurationView(row: SsoConfigurationRow, publicUrl: string | null): SsoConfigurationView {
  return {
    ...row,
    redirectUri: publicUrl === null ? null : `${publicUrl}${ssoCallbackPath(row.organizationId)}`,
    loginUrl: publicUrl === null ? null : `${publicUrl}/v1/sso/${row.organizationId}/login`,
  };
}

/** 404 for an organization without SSO: unknown, malformed and foreign organization IDs alike. */
export class SsoNotConfigured extends NotFound {
  override readonly type = 'SsoNotConfigured';
  constructor() {
    super('Sso');
    this.message = 'Single sign-on is not configured for this organization.';
  }
}

/** The shared callback of earlier versions: a provider still sending browsers there must be given the new redirect URI. */
export class SsoCallbackMoved extends NotFound {
  override readonly type = 'SsoCallbackMoved';
  constructor() {
    super('SsoCallback');
    this.message =
      'The sign-in callback is now per organization: register <public URL>/v1/sso/{organizationId}/callback (the redirectUri of GET /v1/sso) at the identity provider, then sign in again.';
  }
}

/** The server's public origin, which redirect URIs are built from; sign-in is refused without one. */
export function requirePublicUrl(publicUrl: string | null): string {
  if (publicUrl === null) throw new Conflict('SsoUnavailable', 'Single sign-on needs the server’s public URL (OPENBOT_PUBLIC_URL) to build its redirect URI.');
  return publicUrl;
}

/** What a browser app reads to send its CSRF token (`GET /v1/sso/session`). */
export interface SessionView {
  readonly sessionId: string;
  readonly memberId: MemberId;
  readonly organizationId: OrganizationId;
  readonly role: MemberRole;
  readonly csrfToken: string;
  readonly expiresAt: Date;
}
