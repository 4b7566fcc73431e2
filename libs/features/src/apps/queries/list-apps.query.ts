import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { appNotFound } from '../app-failures';
import { APP_VIEW_COLUMNS, type AppView } from '../app-view';

/** The organization's Apps, oldest first. */
export class ListApps extends Query<Page<AppView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListApps)
export class ListAppsHandler implements IQueryHandler<ListApps> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListApps): Promise<Page<AppView>> {
    const rows = await this.db.rows<AppView>(
      `SELECT ${APP_VIEW_COLUMNS} FROM apps WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}

/** One App of the organization (another organization's answers 404). */
export class GetApp extends Query<AppView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
  ) {
    super();
  }
}

@QueryHandler(GetApp)
export class GetAppHandler implements IQueryHandler<GetApp> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId }: GetApp): Promise<AppView> {
    if (!isUuid(appId)) throw appNotFound();
    const row = await this.db.one<AppView>(`SELECT ${APP_VIEW_COLUMNS} FROM apps WHERE id = $1 AND organization_id = $2`, [appId, caller.organizationId]);
    if (row === undefined) throw appNotFound();
    return row;
  }
}
