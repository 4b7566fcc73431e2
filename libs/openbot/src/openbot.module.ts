import { Global, Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import type { MigrationInterface } from 'typeorm';
import { AccessModule } from './access/access.module';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AuditModule } from './audit/audit.module';
import { BillingModule } from './billing/billing.module';
import { BotsModule } from './bots/bots.module';
import { ChatsModule } from './chats/chats.module';
import { RUNTIME_CONFIG, type RuntimeConfig } from './config/runtime-config';
import { DatabaseModule } from './database/database.module';
import { EngineModule } from './engine/engine.module';
import { EgressModule } from './egress/egress.module';
import { ObjectStoreModule } from './object-store/object-store.module';
import { ErrorsModule } from './errors/errors.module';
import { ExecutionsModule } from './executions/executions.module';
import { ApprovalsModule } from './approvals/approvals.module';
import { RemindersModule } from './reminders/reminders.module';
import { FilesModule } from './files/files.module';
import { HealthModule } from './health/health.module';
import { LimitsModule } from './limits/limits.module';
import { ModelProvidersModule } from './model-providers/model-providers.module';
import { AppOAuthModule } from './app-oauth/app-oauth.module';
import { AppCatalogModule } from './app-catalog/app-catalog.module';
import { AppsModule } from './apps/apps.module';
import { MembersModule } from './members/members.module';
import { MemoryModule } from './memory/memory.module';
import { MetricsModule } from './metrics/metrics.module';
import { TracingModule } from './tracing/tracing.module';
import { RetentionModule } from './retention/retention.module';
import { ModelsModule } from './models/models.module';
import { OrganizationsModule } from './organizations/organizations.module';
import { SealingModule } from './sealing/sealing.module';
import { SsoModule } from './sso/sso.module';
import { ToolCallsModule } from './tool-calls/tool-calls.module';
import { TurnCoreModule } from './turn-core/turn-core.module';
import { UsageModule } from './usage/usage.module';
import { VaultsModule } from './vaults/vaults.module';

@Global()
@Module({})
class ConfigModule {
  static forRoot(config: RuntimeConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: RUNTIME_CONFIG, useValue: config }],
      exports: [RUNTIME_CONFIG],
    };
  }
}

/** Every feature module of the product, composed for one node. */
@Module({})
export class OpenbotModule {
  static forRoot(options: {
    readonly config: RuntimeConfig;
    readonly migrations: ReadonlyArray<new () => MigrationInterface>;
  }): DynamicModule {
    return {
      module: OpenbotModule,
      imports: [
        ConfigModule.forRoot(options.config),
        CqrsModule.forRoot(),
        DatabaseModule.forRoot({
          url: options.config.databaseUrl,
          migrations: options.migrations,
          nodeId: options.config.nodeId,
          poolSize: options.config.databasePoolSize,
        }),
        MetricsModule,
        TracingModule,
        SealingModule,
        VaultsModule,
        EgressModule,
        ObjectStoreModule,
        HealthModule,
        ErrorsModule,
        LimitsModule,
        AccessModule,
        OrganizationsModule,
        ApiKeysModule,
        MembersModule,
        AuditModule,
        BillingModule,
        SsoModule,
        ModelProvidersModule,
        ModelsModule,
        TurnCoreModule,
        ToolCallsModule,
        AppsModule,
        AppOAuthModule,
        AppCatalogModule,
        BotsModule,
        MemoryModule,
        ChatsModule,
        UsageModule,
        EngineModule,
        ExecutionsModule,
        ApprovalsModule,
        RemindersModule,
        FilesModule,
        RetentionModule,
      ],
      exports: [CqrsModule, ConfigModule],
    };
  }
}
