import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { cappedFetch } from '@openbot/protocol';
import { AppClient } from '../apps/app-client';
import { AppsModule } from '../apps/apps.module';
import { ConnectionGrants } from '../apps/connection-grants';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { EgressClient } from '../../../platform/src/egress/egress-client';
import { Sealer } from '../../../platform/src/sealing/sealer';
import { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { authorizationPrepareWorkflow } from './authorization-prepare.workflow';
import { codeExchangeWorkflow } from './code-exchange.workflow';
import { AuthorizeConnectionHandler } from './commands/authorize-connection.command';
import { BindLoopbackHandler } from './commands/bind-loopback.command';
import { CompleteAuthorizationHandler } from './commands/complete-authorization.command';
import { StartAuthorizationHandler } from './commands/start-authorization.command';
import { ConnectionBearer } from './connection-bearer';
import { handOverGrant } from './grant-cleanup-command';
import { grantCleanupWorkflow } from './grant-cleanup.workflow';
import { grantRefreshWorkflow } from './grant-refresh.workflow';
import { GrantTokens } from './grant-tokens';
import { GetClientMetadataDocumentHandler } from './queries/get-client-metadata-document.query';

/**
 * App OAuth (issue 18, decision 038): authorization, grants, refresh and cleanup of App connections.
 * It sits above apps and fills the two ports apps owns (decision 079): AppClient's
 * ConnectionAuthorization and ConnectionGrants' handover; apps never imports it.
 */
@Module({
  imports: [AppsModule],
  providers: [AuthorizeConnectionHandler, StartAuthorizationHandler, BindLoopbackHandler, CompleteAuthorizationHandler, GetClientMetadataDocumentHandler],
})
export class AppOAuthModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(Sealer) private readonly sealer: Sealer,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(ConnectionGrants) private readonly grants: ConnectionGrants,
  ) {}

  onModuleInit(): void {
    // Authorization-server answers are documents: capped like OpenID discovery and token answers.
    const fetch = cappedFetch(this.egress.fetch, this.egress.limits.documentBytes);
    this.engine.register(authorizationPrepareWorkflow({ db: this.db, fetch, sealed: this.sealed, publicUrl: this.config.publicUrl ?? 'http://invalid.localhost', preRegistered: this.config.appOAuthClients, metadataDocuments: this.config.appOAuthMetadataDocuments }));
    this.engine.register(codeExchangeWorkflow({ db: this.db, fetch, sealed: this.sealed, sealer: this.sealer, engine: () => this.engine }));
    this.engine.register(grantCleanupWorkflow({ db: this.db, fetch, sealed: this.sealed }));
    this.engine.register(grantRefreshWorkflow({ db: this.db, fetch, sealed: this.sealed, sealer: this.sealer, engine: () => this.engine }));
    // Apps owns the ports; App OAuth, above it, fills them: the bearer of a connection's requests and the handover of its grant.
    this.grants.useHandover(handOverGrant);
    this.client.useAuthorization(new ConnectionBearer(new GrantTokens({ db: this.db, sealed: this.sealed, engine: this.engine })));
  }
}
