import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { effectivePermissions, Forbidden, isMemberRole, Unauthenticated, type MemberCaller, type MemberId, type OrganizationId } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { hashToken, isWellFormedToken, tokensEqual } from '../session-tokens';

/**
 * Turns a session cookie into the calling member (IDN-09): the same MemberCaller an API key
 * gives, so both enter the same use cases. An unsafe method (POST, PUT, PATCH, DELETE) must carry
 * the session's CSRF token; a missing or wrong one is Forbidden. Every other failure is the same
 * Unauthenticated answer.
 */
export class AuthenticateSession extends Command<MemberCaller> {
  constructor(
    readonly token: string,
    readonly unsafeMethod: boolean,
    readonly csrfToken: string | null,
  ) {
    super();
  }
}

const SESSION_REFUSED = 'The session is unknown, expired or signed out; sign in again.';

@CommandHandler(AuthenticateSession)
export class AuthenticateSessionHandler implements ICommandHandler<AuthenticateSession> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ token, unsafeMethod, csrfToken }: AuthenticateSession): Promise<MemberCaller> {
    if (!isWellFormedToken(token)) throw new Unauthenticated(SESSION_REFUSED);
    // One indexed read; a removed member's sessions end with its removal (IDN-06).
    const row = await this.db.one<{ id: string; organizationId: OrganizationId; memberId: MemberId; csrfToken: string; role: string }>(
      `SELECT s.id, s.organization_id AS "organizationId", s.member_id AS "memberId", s.csrf_token AS "csrfToken", m.role
         FROM sessions s JOIN members m ON m.id = s.member_id AND m.organization_id = s.organization_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND m.removed_at IS NULL`,
      [hashToken(token)],
    );
    if (row === undefined) throw new Unauthenticated(SESSION_REFUSED);
    // A cookie rides along on cross-site requests; the CSRF token only a same-origin page can read.
    if (unsafeMethod && (csrfToken === null || !tokensEqual(csrfToken, row.csrfToken))) {
      throw new Forbidden('A request that changes something must send the session’s CSRF token (GET /v1/sso/session) in the x-csrf-token header.');
    }
    if (!isMemberRole(row.role)) throw new Error(`member ${row.memberId} has an unknown role`);
    return {
      kind: 'member',
      organizationId: row.organizationId,
      memberId: row.memberId,
      role: row.role,
      apiKeyId: null,
      sessionId: row.id,
      permissions: effectivePermissions(row.role, null),
    };
  }
}
