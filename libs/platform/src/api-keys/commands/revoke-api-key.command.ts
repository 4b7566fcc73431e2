import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canManageAllApiKeys, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { recordAudit } from '../../audit/record-audit';
import type { ApiKeyView } from '../api-key-view';

/**
 * Revokes a key at once; revoking an already revoked key changes nothing. A key of another
 * organization, or (for plain members) of another member, is NotFound, as if it did not exist.
 */
export class RevokeApiKey extends Command<ApiKeyView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(RevokeApiKey)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKey> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, id }: RevokeApiKey): Promise<ApiKeyView> {
    if (!isUuid(id)) throw new NotFound('ApiKey');
    return this.db.transaction(async (tx) => {
      const row = await tx.one<ApiKeyView & { newlyRevoked: boolean }>(
        `UPDATE api_keys k SET revoked_at = COALESCE(k.revoked_at, now())
           FROM (SELECT id, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE) old
          WHERE k.id = old.id AND k.organization_id = $2 AND ($3::boolean OR k.member_id = $4)
          RETURNING k.id, k.name, k.member_id AS "memberId", k.created_at AS "createdAt", k.expires_at AS "expiresAt",
                    k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt", k.scopes, old.revoked_at IS NULL AS "newlyRevoked"`,
        [id, caller.organizationId, canManageAllApiKeys(caller), caller.memberId],
      );
      if (row === undefined) throw new NotFound('ApiKey');
      const { newlyRevoked, ...view } = row;
      if (newlyRevoked) {
        await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'api-key.revoked', target: { type: 'api-key', id }, details: { memberId: view.memberId } });
      }
      return view;
    });
  }
}
