import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { ApiKeyId, Caller, MemberId, MemberRole, OrganizationId, Permission } from '@openbot/domain';
import { Database } from '../../database/sql';

export type WhoAmI =
  | { readonly kind: 'platform-admin' }
  | {
      readonly kind: 'member';
      readonly organization: { readonly id: OrganizationId; readonly name: string };
      readonly member: { readonly id: MemberId; readonly role: MemberRole; readonly permissions: readonly Permission[] };
      readonly apiKey: { readonly id: ApiKeyId; readonly name: string } | null;
    };

/** `GET /v1/me`: the caller's organization, member and credential. */
export class GetWhoAmI extends Query<WhoAmI> {
  constructor(readonly caller: Caller) {
    super();
  }
}

@QueryHandler(GetWhoAmI)
export class GetWhoAmIHandler implements IQueryHandler<GetWhoAmI> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller }: GetWhoAmI): Promise<WhoAmI> {
    if (caller.kind === 'platform-admin') return { kind: 'platform-admin' };
    const row = await this.db.one<{ organizationName: string; keyName: string | null }>(
      `SELECT o.name AS "organizationName", k.name AS "keyName"
         FROM organizations o
         LEFT JOIN api_keys k ON k.id = $2::uuid AND k.organization_id = o.id
        WHERE o.id = $1`,
      [caller.organizationId, caller.apiKeyId],
    );
    return {
      kind: 'member',
      organization: { id: caller.organizationId, name: row?.organizationName ?? '' },
      member: { id: caller.memberId, role: caller.role, permissions: caller.permissions },
      apiKey: caller.apiKeyId !== null && row?.keyName != null ? { id: caller.apiKeyId, name: row.keyName } : null,
    };
  }
}
