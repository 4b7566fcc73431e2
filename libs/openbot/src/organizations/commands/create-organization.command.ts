import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ApiKeyId, MemberId, OrganizationId } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { generateSecret, hashSecret } from '../../api-keys/api-key-secret';
import { ApiKeyEntity } from '../../api-keys/storage/api-key.entity';
import { newId } from '@openbot/domain';
import { MemberEntity } from '../storage/member.entity';
import { OrganizationEntity } from '../storage/organization.entity';

export interface CreatedOrganization {
  readonly organization: { readonly id: OrganizationId; readonly name: string };
  readonly member: { readonly id: MemberId; readonly role: 'owner' };
  /** The secret is returned here once and never again. */
  readonly apiKey: { readonly id: ApiKeyId; readonly name: string; readonly secret: string };
}

/** Platform bootstrap: an organization, its owner and the owner's first API key, all or nothing. */
export class CreateOrganization extends Command<CreatedOrganization> {
  constructor(readonly name: string) {
    super();
  }
}

@CommandHandler(CreateOrganization)
export class CreateOrganizationHandler implements ICommandHandler<CreateOrganization> {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async execute({ name }: CreateOrganization): Promise<CreatedOrganization> {
    const organizationId = newId<OrganizationId>();
    const memberId = newId<MemberId>();
    const apiKeyId = newId<ApiKeyId>();
    const secret = generateSecret(apiKeyId);
    const keyName = 'Owner key';
    await this.dataSource.transaction(async (tx) => {
      await tx.insert(OrganizationEntity, { id: organizationId, name });
      await tx.insert(MemberEntity, { id: memberId, organizationId, role: 'owner' });
      await tx.insert(ApiKeyEntity, {
        id: apiKeyId,
        organizationId,
        memberId,
        name: keyName,
        secretHash: hashSecret(secret),
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
      });
    });
    return {
      organization: { id: organizationId, name },
      member: { id: memberId, role: 'owner' },
      apiKey: { id: apiKeyId, name: keyName, secret },
    };
  }
}
