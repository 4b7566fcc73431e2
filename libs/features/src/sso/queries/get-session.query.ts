import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import type { SessionView } from '../sso-view';
import { requireSession } from '../commands/sign-out.command';

/** `GET /v1/sso/session`: the calling session, with the CSRF token a browser app sends on unsafe requests. */
export class GetSession extends Query<SessionView> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@QueryHandler(GetSession)
export class GetSessionHandler implements IQueryHandler<GetSession> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller }: GetSession): Promise<SessionView> {
    const sessionId = requireSession(caller);
    const row = await this.db.one<{ csrfToken: string; expiresAt: Date }>(
      `SELECT csrf_token AS "csrfToken", expires_at AS "expiresAt" FROM sessions WHERE id = $1 AND organization_id = $2 AND member_id = $3`,
      [sessionId, caller.organizationId, caller.memberId],
    );
    // The guard has just authenticated this session: a missing row is a fault, not a client error.
    if (row === undefined) throw new Error(`session ${sessionId} vanished after authentication`);
    return { sessionId, memberId: caller.memberId, organizationId: caller.organizationId, role: caller.role, csrfToken: row.csrfToken, expiresAt: row.expiresAt };
  }
}
