import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ApiKeyId, MemberId, OrganizationId } from '@openbot/domain';
import { Database } from '../../database/sql';
import { generateSecret, hashSecret } from '../../identity/api-key-secret';
import { newId } from '@openbot/domain';

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
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ name }: CreateOrganization): Promise<CreatedOrganization> {
    const organizationId = newId<OrganizationId>();
    const memberId = newId<MemberId>();
    const apiKeyId = newId<ApiKeyId>();
    const secret = generateSecret(apiKeyId);
    const keyName = 'Owner key';
    await this.db.transaction(async (tx) => {
      await tx.count('INSERT INTO organizations (id, name) VALUES ($1, $2)', [organizationId, name]);
      await tx.count(`INSERT INTO members (id, organization_id, role) VALUES ($1, $2, 'owner')`, [memberId, organizationId]);
      await tx.count('INSERT INTO api_keys (id, organization_id, member_id, name, secret_hash) VALUES ($1, $2, $3, $4, $5)', [
        apiKeyId,
        organizationId,
        memberId,
        keyName,
        hashSecret(secret),
      ]);
    });
    return {
      organization: { id: organizationId, name },
      member: { id: memberId, role: 'owner' },
      apiKey: { id: apiKeyId, name: keyName, secret },
    };
  }
}
