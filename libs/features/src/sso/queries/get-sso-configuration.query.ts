import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { requireSsoManage } from '../sso-configurations';
import { SSO_CONFIGURATION_COLUMNS, SsoNotConfigured, toSsoConfigurationView, type SsoConfigurationRow, type SsoConfigurationView } from '../sso-view';

/** `GET /v1/sso`: the caller's organization's configuration, without its secret; 404 SsoNotConfigured when off. */
export class GetSsoConfiguration extends Query<SsoConfigurationView> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@QueryHandler(GetSsoConfiguration)
export class GetSsoConfigurationHandler implements IQueryHandler<GetSsoConfiguration> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller }: GetSsoConfiguration): Promise<SsoConfigurationView> {
    requireSsoManage(caller);
    const row = await this.db.one<SsoConfigurationRow>(
      `SELECT ${SSO_CONFIGURATION_COLUMNS} FROM sso_configurations WHERE organization_id = $1 AND deleted_at IS NULL`,
      [caller.organizationId],
    );
    if (row === undefined) throw new SsoNotConfigured();
    return toSsoConfigurationView(row, this.config.publicUrl);
  }
}
