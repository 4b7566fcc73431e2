import { Inject } from '@nestjs/common';
import { Command, CommandHandler, QueryBus, type ICommandHandler } from '@nestjs/cqrs';
import { newId, type MemberCaller } from '@openbot/domain';
import { declare, type McpView } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { connectionNotFound } from '../app-failures';
import { ConnectionDiscovery } from '../connection-discovery';
import { GetToolView } from '../queries/get-tool-view.query';

/** A View a member opened: the binding its tool calls go through, and what to render. */
export interface OpenedView extends McpView {
  readonly id: string;
  readonly connectionId: string;
  readonly toolName: string;
  readonly revision: number;
  readonly createdAt: Date;
}

/**
 * Opens the View of one tool of a connection the caller may see (MCP Apps): reads its `ui://`
 * resource (HTML, CSP, permissions) and stores a View binding with the declarations of the
 * connection's tools at the current revision (from its cached discovery). The View's tool calls
 * (`POST /v1/views/{id}/calls`) send those declarations, checked like a model's calls. The binding
 * is stored, so it stays valid across restarts and on every node (FW-05); it goes with its
 * connection.
 */
export class OpenView extends Command<OpenedView> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
    readonly toolName: string,
  ) {
    super();
  }
}

@CommandHandler(OpenView)
export class OpenViewHandler implements ICommandHandler<OpenView> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(ConnectionDiscovery) private readonly discovery: ConnectionDiscovery,
  ) {}

  async execute({ caller, connectionId, toolName }: OpenView): Promise<OpenedView> {
    const view = await this.queries.execute(new GetToolView(caller, connectionId, toolName));
    const discovered = await this.discovery.toolsForMember(connectionId, caller.memberId);
    const declarations = discovered.tools.map((tool) => declare(tool, { id: connectionId, revision: discovered.revision }, tool.name));
    const row = await this.db.one<{ id: string; createdAt: Date }>(
      `INSERT INTO app_views (id, organization_id, member_id, connection_id, tool_name, uri, revision, declarations)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8 FROM app_connections WHERE id = $4 AND organization_id = $2 AND deleting_at IS NULL
       RETURNING id, created_at AS "createdAt"`,
      [newId(), caller.organizationId, caller.memberId, connectionId, toolName, view.uri, discovered.revision, JSON.stringify(declarations)],
    );
    if (row === undefined) throw connectionNotFound();
    return { ...view, id: row.id, connectionId, toolName, revision: discovered.revision, createdAt: row.createdAt };
  }
}
