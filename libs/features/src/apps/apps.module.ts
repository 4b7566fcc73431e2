import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { Database } from '../../../platform/src/database/sql';
import { SqlFailureRecorder } from '../../../platform/src/errors/sql-failure-recorder';
import { AppClient } from './app-client';
import { AppSessions } from './app-sessions';
import { CheckConnectionHandler } from './commands/check-connection.command';
import { CreateConnectionHandler } from './commands/create-connection.command';
import { DeleteAppHandler } from './commands/delete-app.command';
import { DeleteConnectionHandler } from './commands/delete-connection.command';
import { RegisterAppHandler } from './commands/register-app.command';
import { connectionCheckWorkflow } from './connection-check.workflow';
import { connectionCleanupWorkflow } from './connection-cleanup.workflow';
import { ConnectionGrants } from './connection-grants';
import { ConnectionDiscovery } from './connection-discovery';
import { GetAppHandler, ListAppsHandler } from './queries/list-apps.query';
import { ListConnectionToolsHandler } from './queries/list-connection-tools.query';
import { DeclareAppToolsHandler } from './queries/declare-app-tools.handler';
import { GetToolViewHandler } from './queries/get-tool-view.query';
import { OpenViewHandler } from './commands/open-view.command';
import { CallViewToolHandler } from './commands/call-view-tool.command';
import { GetViewCallHandler, GetViewHandler } from './queries/get-view.query';
import { viewCallWorkflow } from './view-call.workflow';
import { appTool } from './app-tool';
import { ToolCalls } from '../../../platform/src/tool-calls/tool-calls';
import { TurnTools } from '../../../platform/src/turn-core/turn-tool';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { GetConnectionHandler, ListConnectionsHandler } from './queries/list-connections.query';

/**
 * Apps (MCP servers) and their connections (issue 17, decision 031). The lowest of the App
 * features: App OAuth and the App catalog build on it, and it owns the ports App OAuth fills
 * (decision 079): AppClient's ConnectionAuthorization and ConnectionGrants' grant handover.
 */
@Module({
  providers: [
    AppClient,
    AppSessions,
    ConnectionDiscovery,
    ConnectionGrants,
    RegisterAppHandler,
    DeleteAppHandler,
    ListAppsHandler,
    GetAppHandler,
    CreateConnectionHandler,
    ListConnectionsHandler,
    GetConnectionHandler,
    ListConnectionToolsHandler,
    DeclareAppToolsHandler,
    GetToolViewHandler,
    OpenViewHandler,
    CallViewToolHandler,
    GetViewHandler,
    GetViewCallHandler,
    CheckConnectionHandler,
    DeleteConnectionHandler,
  ],
  exports: [AppClient, AppSessions, ConnectionDiscovery, ConnectionGrants],
})
export class AppsModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(ConnectionDiscovery) private readonly discovery: ConnectionDiscovery,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
    @Inject(AppSessions) private readonly sessions: AppSessions,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(ConnectionGrants) private readonly grants: ConnectionGrants,
    @Inject(TurnTools) private readonly tools: TurnTools,
    @Inject(ToolCalls) private readonly toolCalls: ToolCalls,
  ) {}

  onModuleInit(): void {
    this.engine.register(connectionCheckWorkflow({ db: this.db, client: this.client, discovery: this.discovery, failures: this.failures }));
    // App tools: a Turn's calls and a View's calls both go through ToolCalls (decision 078).
    this.tools.register(appTool({ db: this.db, sessions: this.sessions, failures: this.failures, callTimeoutMs: this.config.appCallTimeoutSeconds * 1000 }));
    this.engine.register(viewCallWorkflow({ db: this.db, toolCalls: this.toolCalls }));
    this.engine.register(connectionCleanupWorkflow({ db: this.db, client: this.client, grants: this.grants }));
  }
}
