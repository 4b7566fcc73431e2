import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { recordAudit } from '../../../../platform/src/audit/record-audit';

/**
 * Signs the calling session out (`POST /v1/sso/logout`): the session is revoked at once, on every
 * node (the next request with its cookie is Unauthenticated). Only a session can sign itself out
 * (an API key answers 404 SessionNotFound; keys are revoked instead).
 */
export class SignOut extends Command<void> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@CommandHandler(SignOut)
export class SignOutHandler implements ICommandHandler<SignOut> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller }: SignOut): Promise<void> {
    const sessionId = requireSession(caller);
    await this.db.transaction(async (tx) => {
      const rows = await tx.rows<{ id: string }>(
        'UPDATE sessions SET revoked_at = now() WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL RETURNING id',
        [sessionId, caller.organizationId],
      );
      // Already revoked by a concurrent sign-out: nothing more to record.
      if (rows.length === 0) return;
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'session.revoked',
        target: { type: 'session', id: sessionId },
        details: { memberId: caller.memberId, reason: 'sign-out' },
      });
    });
  }
}

/**
 * 404 SessionNotFound: the request carries no session (an API key). Not a 403: access is the
 * permission a route names (IDN-05), and every member may see and end its own session.
 */
export class NoSession extends NotFound {
  constructor() {
    super('Session');
    this.message = 'This request carries no session cookie (SSO sign-in); an API key has no session.';
  }
}

/** The session of a cookie-authenticated caller; an API key has none to show or sign out. */
export function requireSession(caller: MemberCaller): string {
  if (caller.sessionId == null) throw new NoSession();
  return caller.sessionId;
}
