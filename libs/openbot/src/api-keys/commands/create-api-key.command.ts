import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, type ApiKeyId, type MemberCaller } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { newId } from '@openbot/domain';
import { generateSecret, hashSecret } from '../api-key-secret';
import type { ApiKeyView } from '../api-key-view';
import { ApiKeyEntity } from '../storage/api-key.entity';

export interface CreatedApiKey extends ApiKeyView {
  /** Shown once; only its hash is stored. */
  readonly secret: string;
}

/** A new key for the calling member, optionally expiring. */
export class CreateApiKey extends Command<CreatedApiKey> {
  constructor(
    readonly caller: MemberCaller,
    readonly name: string,
    readonly expiresAt: Date | null,
  ) {
    super();
  }
}

@CommandHandler(CreateApiKey)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKey> {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ caller, name, expiresAt }: CreateApiKey): Promise<CreatedApiKey> {
    // Some ISO 8601 forms pass the DTO check but are no JavaScript date (`+9999-…`, `2031-W01`).
    if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) {
      throw new InvalidInput([{ path: 'expiresAt', message: 'expiresAt must be an ISO 8601 date-time' }]);
    }
    if (expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      throw new InvalidInput([{ path: 'expiresAt', message: 'expiresAt must be in the future' }]);
    }
    const id = newId<ApiKeyId>();
    const secret = generateSecret(id);
    const [row] = (await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(ApiKeyEntity)
      .values({
        id,
        organizationId: caller.organizationId,
        memberId: caller.memberId,
        name,
        secretHash: hashSecret(secret),
        expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      })
      .returning(['createdAt'])
      .execute()).raw as Array<{ created_at: Date }>;
    return {
      id,
      name,
      memberId: caller.memberId,
      createdAt: row!.created_at,
      expiresAt,
      lastUsedAt: null,
      revokedAt: null,
      secret,
    };
  }
}
