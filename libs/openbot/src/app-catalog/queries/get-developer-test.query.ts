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
  /** As stored: a literal value is null (sealed until the run ends), a Vault reference as given. */
  readonly variables: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, unknown>>;
  /** Where the developer signs in while the test is `needs_authorization`: shown to that developer only. */
  readonly authorizationUrl: string | null;
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
      `SELECT id, state, connection, tools, execution_id AS "executionId", member_id AS "memberId", remote, variables, headers,
              CASE WHEN member_id = $4 THEN authorization_url END AS "authorizationUrl"
         FROM app_developer_tests WHERE id = $1 AND app_id = $2 AND organization_id = $3`,
      [testId, appId, caller.organizationId, caller.memberId],
    );
    if (row === undefined) throw new NotFound('DeveloperTest');
    return row;
  }
}
