import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { cappedFetch } from '@openbot/protocol';
import { AppClient } from '../apps/app-client';
import { AppsModule } from '../apps/apps.module';
import { Database } from '../../../platform/src/database/sql';
import { EgressClient } from '../../../platform/src/egress/egress-client';
import { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { appIndexWorkflow } from './app-index.workflow';
import { CreateProofHandler } from './commands/create-proof.command';
import { DeleteProofHandler } from './commands/delete-proof.command';
import { IndexAppHandler } from './commands/index-app.command';
import { VerifyProofHandler } from './commands/verify-proof.command';
import { proofVerifyWorkflow } from './proof-verify.workflow';
import { developerTestWorkflow } from './developer-test.workflow';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { StartDeveloperTestHandler } from './commands/start-developer-test.command';
import { DeleteDeveloperTestHandler } from './commands/delete-developer-test.command';
import { GetDeveloperTestHandler } from './queries/get-developer-test.query';
import { GetProofHandler } from './queries/get-proof.query';
import { ListProofsHandler } from './queries/list-proofs.query';
import { SearchAppIndexHandler } from './queries/search-app-index.query';

/** Developer proofs of App domains and the App index (issue 18, decision 039). */
@Module({
  imports: [AppsModule],
  providers: [CreateProofHandler, VerifyProofHandler, DeleteProofHandler, GetProofHandler, ListProofsHandler, IndexAppHandler, SearchAppIndexHandler, StartDeveloperTestHandler, DeleteDeveloperTestHandler, GetDeveloperTestHandler],
})
export class AppCatalogModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  onModuleInit(): void {
    // A proof answer is a small document: capped like other documents.
    this.engine.register(proofVerifyWorkflow({ db: this.db, fetch: cappedFetch(this.egress.fetch, this.egress.limits.documentBytes) }));
    this.engine.register(appIndexWorkflow({ db: this.db, client: this.client }));
    this.engine.register(developerTestWorkflow({ db: this.db, client: this.client, sealed: this.sealed, publicUrl: this.config.publicUrl ?? 'http://invalid.localhost' }));
  }
}
