import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, parsePageRequest, type MemberCaller, type Page } from '@openbot/domain';
import type { ListedTool } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { connectionNotFound } from '../app-failures';
import { ConnectionDiscovery } from '../connection-discovery';
import { visibleConnection } from './list-connections.query';

/** A tool as full discovery answers it. */
export interface ConnectionToolView {
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations: ListedTool['annotations'];
}

/**
 * Full discovery of a connection the caller may see (`GET /v1/connections/{id}/tools`), cached per
 * connection and revision, in the server's order. The cursor is the position after the last tool
 * of the page.
 */
export class ListConnectionTools extends Query<Page<ConnectionToolView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
    readonly after: string | undefined,
    readonly limit: string | undefined,
  ) {
    super();
  }
}

@QueryHandler(ListConnectionTools)
export class ListConnectionToolsHandler implements IQueryHandler<ListConnectionTools> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ConnectionDiscovery) private readonly discovery: ConnectionDiscovery,
  ) {}

  async execute({ caller, connectionId, after, limit }: ListConnectionTools): Promise<Page<ConnectionToolView>> {
    const { limit: size } = parsePageRequest(undefined, limit);
    const start = after === undefined || after === '' ? 0 : /^\d{1,6}$/.test(after) ? Number(after) : NaN;
    if (!Number.isInteger(start)) throw new InvalidInput([{ path: 'after', message: 'after must be a cursor returned as next' }]);
    if ((await visibleConnection(this.db, caller, connectionId)) === undefined) throw connectionNotFound();
    const { tools } = await this.discovery.toolsForMember(connectionId, caller.memberId);
    const data = tools.slice(start, start + size).map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations }));
    return { data, next: start + size < tools.length ? String(start + size) : null };
  }
}
