import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { NotFound, type MemberCaller } from '@openbot/domain';
import { isMcpFailure, type McpView } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { AppClient } from '../app-client';
import { AppServerUnavailable, connectionNotFound } from '../app-failures';
import { ConnectionDiscovery } from '../connection-discovery';
import { visibleConnection } from './list-connections.query';

/**
 * The View of one tool of a connection the caller may see (MCP Apps): the `ui://` resource the
 * tool's discovery names, read from the server with its CSP and permissions, for an API client to
 * render in a sandbox. A tool without a View is 404 ViewNotFound.
 */
export class GetToolView extends Query<McpView & { readonly toolName: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
    readonly toolName: string,
  ) {
    super();
  }
}

@QueryHandler(GetToolView)
export class GetToolViewHandler implements IQueryHandler<GetToolView> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ConnectionDiscovery) private readonly discovery: ConnectionDiscovery,
    @Inject(AppClient) private readonly client: AppClient,
  ) {}

  async execute({ caller, connectionId, toolName }: GetToolView): Promise<McpView & { readonly toolName: string }> {
    if ((await visibleConnection(this.db, caller, connectionId)) === undefined) throw connectionNotFound();
    try {
      const { tools } = await this.discovery.tools(connectionId, { actor: { kind: 'member', id: caller.memberId } });
      const uri = tools.find((t) => t.name === toolName)?.viewUri ?? null;
      if (uri === null) throw new NotFound('View');
      const target = await this.client.targetOf(this.db, connectionId);
      if (target === null) throw connectionNotFound();
      const connection = await this.client.open(target, { actor: { kind: 'member', id: caller.memberId }, timeoutMs: 30_000 });
      try {
        return { toolName, ...(await connection.readView(uri)) };
      } finally {
        await connection.close().catch(() => undefined);
      }
    } catch (error) {
      if (isMcpFailure(error)) throw new AppServerUnavailable(error);
      throw error;
    }
  }
}
