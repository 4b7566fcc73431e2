import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';

export interface DeveloperTestView {
  readonly id: string;
  readonly state: string;
  readonly connection: unknown;
  readonly tools: readonly string[] | null;
  readonly executionId: string;
  readonly memberId: string;
  readonly remote: string;
}

/** One developer test of an App of the organization (another organization's answers 404). */
export class GetDeveloperTest extends Query<DeveloperTestView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly testId: string,
  ) {
    super();
  }
}

@QueryHandler(GetDeveloperTest)
export class GetDeveloperTestHandler implements IQueryHandler<GetDeveloperTest> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId, testId }: GetDeveloperTest): Promise<DeveloperTestView> {
    if (!isUuid(appId) || !isUuid(testId)) throw new NotFound('DeveloperTest');
    const row = await this.db.one<DeveloperTestView>(
      `SELECT id, state, connection, tools, execution_id AS "executionId", member_id AS "memberId", remote FROM app_developer_tests WHERE id = $1 AND app_id = $2 AND organization_id = $3`,
      [testId, appId, caller.organizationId],
    );
    if (row === undefined) throw new NotFound('DeveloperTest');
    return row;
  }
}
