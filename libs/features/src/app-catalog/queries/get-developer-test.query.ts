import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';

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
  /**
   * The pending authorization behind `authorizationUrl` (the `{id}` of `/v1/oauth/authorizations/{id}/…`):
   * null exactly when `authorizationUrl` is, so a client never takes it apart from the URL.
   */
  readonly authorizationId: string | null;
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
    // The newest request the run issued is the one its authorization_url shows (a replay of the sign-in phase issues another, in its own transaction).
    const row = await this.db.one<DeveloperTestView>(
      `SELECT t.id, t.state, t.connection, t.tools, t.execution_id AS "executionId", t.member_id AS "memberId", t.remote, t.variables, t.headers,
              CASE WHEN t.member_id = $4 THEN t.authorization_url END AS "authorizationUrl",
              CASE WHEN t.member_id = $4 AND t.authorization_url IS NOT NULL THEN
                (SELECT a.id FROM app_oauth_authorizations a WHERE a.developer_test_id = t.id ORDER BY a.created_at DESC, a.id DESC LIMIT 1)
              END AS "authorizationId"
         FROM app_developer_tests t WHERE t.id = $1 AND t.app_id = $2 AND t.organization_id = $3`,
      [testId, appId, caller.organizationId, caller.memberId],
    );
    if (row === undefined) throw new NotFound('DeveloperTest');
    return row;
  }
}
