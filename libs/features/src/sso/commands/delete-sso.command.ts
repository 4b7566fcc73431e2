import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { SsoNotConfigured } from '../sso-view';
import { lockConfiguration, requireSsoManage } from '../sso-configurations';

/**
 * Turns single sign-on off for the caller's organization (`DELETE /v1/sso`): the client secret
 * is deleted and logins in flight are dropped. The row stays as a tombstone whose revision rises,
 * so a later configuration can never reuse a revision some node still has cached. Sessions
 * already signed in stay valid until they expire or are signed out; removing a member ends its
 * sessions at once.
 */
export class DeleteSso extends Command<void> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@CommandHandler(DeleteSso)
export class DeleteSsoHandler implements ICommandHandler<DeleteSso> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller }: DeleteSso): Promise<void> {
    requireSsoManage(caller);
    await this.db.transaction(async (tx) => {
      await lockConfiguration(tx, caller.organizationId);
      const previous = await tx.one<{ recordId: string | null; issuer: string }>(
        'SELECT client_secret_record_id AS "recordId", issuer FROM sso_configurations WHERE organization_id = $1 AND deleted_at IS NULL',
        [caller.organizationId],
      );
      if (previous === undefined) throw new SsoNotConfigured();
      const rows = await tx.rows<{ revision: number }>(
        `UPDATE sso_configurations SET deleted_at = now(), updated_at = now(), client_secret_record_id = NULL, revision = revision + 1
          WHERE organization_id = $1 RETURNING revision`,
        [caller.organizationId],
      );
      if (previous.recordId !== null) await tx.count('DELETE FROM sealed_records WHERE id = $1', [previous.recordId]);
      await tx.count('DELETE FROM sso_logins WHERE organization_id = $1', [caller.organizationId]);
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'sso.deleted',
        target: { type: 'sso-configuration', id: caller.organizationId },
        details: { issuer: previous.issuer, revision: rows[0]!.revision },
      });
    });
  }
}
