import { Inject } from '@nestjs/common';
import { QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, type InputIssue } from '@openbot/domain';
import { declare, modelToolName, type ToolDeclaration } from '@openbot/protocol';
import type { BotTool } from '../../bots/bot-view';
import { DeclareAppTools } from '../../bots/queries/declare-app-tools.query';
import { Database } from '../../../../platform/src/database/sql';
import { mayUseConnection } from '../app-view';
import { ConnectionDiscovery } from '../connection-discovery';

/**
 * Saves the declarations of a Bot's App tools (STC-07, STC-12): each `app` entry names a
 * connection the caller may use — one of its organization's, or a member connection of the
 * caller itself (another organization's, another member's or an unknown one is a 400 on its
 * `connectionId`) — and the tools it takes from the connection's discovery, cached per revision.
 * Each tool keeps its server name, the name the model sees (renamed per the contract when it is
 * not a valid tool name or is taken), its schema, hints, the connection revision and a digest.
 */
@QueryHandler(DeclareAppTools)
export class DeclareAppToolsHandler implements IQueryHandler<DeclareAppTools> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ConnectionDiscovery) private readonly discovery: ConnectionDiscovery,
  ) {}

  async execute({ caller, tools }: DeclareAppTools): Promise<BotTool[]> {
    if (!tools.some((t) => t.kind === 'app')) return [...tools];
    const taken = new Set(tools.filter((t) => t.kind !== 'app').map((t) => t.name));
    const issues: InputIssue[] = [];
    const out: BotTool[] = [];
    for (const [index, tool] of tools.entries()) {
      if (tool.kind !== 'app') {
        out.push(tool);
        continue;
      }
      const connectionId = tool.connectionId!;
      const connection = isUuid(connectionId)
        ? await this.db.one<{ owner: string; member_id: string | null }>(
            `SELECT owner, member_id FROM app_connections WHERE id = $1 AND organization_id = $2 AND deleting_at IS NULL`,
            [connectionId, caller.organizationId],
          )
        : undefined;
      // The same "may use" rule as the Turn's call (IDN-05).
      if (connection === undefined || !mayUseConnection(connection, caller.memberId)) {
        issues.push({ path: `tools.${index}.connectionId`, message: 'this connection does not exist in this organization, or is not yours to use' });
        continue;
      }
      const discovered = await this.discovery.toolsForMember(connectionId, caller.memberId);
      const wanted = tool.tools ?? discovered.tools.map((t) => t.name);
      const declarations: ToolDeclaration[] = [];
      for (const [k, name] of wanted.entries()) {
        const found = discovered.tools.find((t) => t.name === name);
        if (found === undefined) {
          issues.push({ path: `tools.${index}.tools.${k}`, message: `the connection's server has no usable tool "${name}"` });
          continue;
        }
        const modelName = modelToolName(connectionId, name, taken);
        taken.add(modelName);
        declarations.push(declare(found, { id: connectionId, revision: discovered.revision }, modelName));
      }
      out.push({ ...tool, name: '', description: '', parameters: {}, declarations });
    }
    if (issues.length > 0) throw new InvalidInput(issues);
    return out;
  }
}
