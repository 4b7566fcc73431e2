import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { Database } from '../../../../platform/src/database/sql';
import { readRetention, requireRetentionManage, type RetentionView } from '../retention-view';

/** `GET /v1/retention`: the caller's organization's retention settings and what applies (decision 041). */
export class GetRetention extends Query<RetentionView> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@QueryHandler(GetRetention)
export class GetRetentionHandler implements IQueryHandler<GetRetention> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller }: GetRetention): Promise<RetentionView> {
    requireRetentionManage(caller);
    return readRetention(this.db, caller.organizationId, this.config.retention);
  }
}
