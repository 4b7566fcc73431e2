import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { canManageAllApiKeys, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { API_KEY_VIEW_COLUMNS, type ApiKeyView } from '../api-key-view';

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
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ caller, id }: RevokeApiKey): Promise<ApiKeyView> {
    if (!isUuid(id)) throw new NotFound('ApiKey');
    const [rows] = (await this.dataSource.query(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = $1 AND organization_id = $2 AND ($3::boolean OR member_id = $4)
        RETURNING ${API_KEY_VIEW_COLUMNS}`,
      [id, caller.organizationId, canManageAllApiKeys(caller), caller.memberId],
    )) as [ApiKeyView[], number];
    const row = rows[0];
    if (row === undefined) throw new NotFound('ApiKey');
    return row;
  }
}
