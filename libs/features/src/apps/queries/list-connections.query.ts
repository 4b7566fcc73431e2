import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { canSteerOthersWork, isUuid, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { connectionNotFound } from '../app-failures';
import { CONNECTION_VIEW_COLUMNS, VISIBLE_CONNECTION, type ConnectionView } from '../app-view';

/** The connections the caller may see (the organization's, and member connections of its own unless owner or admin), oldest first. */
export class ListConnections extends Query<Page<ConnectionView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
    readonly appId: string | null = null,
  ) {
    super();
  }
}

@QueryHandler(ListConnections)
export class ListConnectionsHandler implements IQueryHandler<ListConnections> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page, appId }: ListConnections): Promise<Page<ConnectionView>> {
    if (appId !== null && !isUuid(appId)) return { data: [], next: null };
    const rows = await this.db.rows<ConnectionView>(
      `SELECT ${CONNECTION_VIEW_COLUMNS} FROM app_connections
        WHERE ${VISIBLE_CONNECTION} AND ($4::uuid IS NULL OR id > $4::uuid) AND ($6::uuid IS NULL OR app_id = $6::uuid)
        ORDER BY id LIMIT $5`,
      [caller.organizationId, caller.memberId, canSteerOthersWork(caller), page.after, page.limit + 1, appId],
    );
    return toPage(rows, page.limit);
  }
}

/** One connection the caller may see; any other ID (another organization's, another member's) answers 404. */
export class GetConnection extends Query<ConnectionView> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
  ) {
    super();
  }
}

@QueryHandler(GetConnection)
export class GetConnectionHandler implements IQueryHandler<GetConnection> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, connectionId }: GetConnection): Promise<ConnectionView> {
    const row = await visibleConnection(this.db, caller, connectionId);
    if (row === undefined) throw connectionNotFound();
    return row;
  }
}

/** The connection when the caller may see it, else undefined. */
export async function visibleConnection(db: Database, caller: MemberCaller, connectionId: string): Promise<ConnectionView | undefined> {
  if (!isUuid(connectionId)) return undefined;
  return db.one<ConnectionView>(`SELECT ${CONNECTION_VIEW_COLUMNS} FROM app_connections WHERE ${VISIBLE_CONNECTION} AND id = $4`, [
    caller.organizationId,
    caller.memberId,
    canSteerOthersWork(caller),
    connectionId,
  ]);
}
