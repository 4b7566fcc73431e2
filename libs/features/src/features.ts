import type { Type } from '@nestjs/common';
import type { SealedColumn } from '@openbot/engine';
import { AccessModule } from '../../platform/src/access/access.module';
import { ApiKeysModule } from '../../platform/src/api-keys/api-keys.module';
import { API_KEYS_ENTITIES } from '../../platform/src/api-keys/storage/entities';
import { AppCatalogModule } from './app-catalog/app-catalog.module';
import { APP_CATALOG_ENTITIES } from './app-catalog/storage/entities';
import { AppOAuthModule } from './app-oauth/app-oauth.module';
import { APP_OAUTH_ENTITIES } from './app-oauth/storage/entities';
import { ApprovalsModule } from './approvals/approvals.module';
import { APPROVALS_ENTITIES } from './approvals/storage/entities';
import { AppsModule } from './apps/apps.module';
import { APPS_ENTITIES } from './apps/storage/entities';
import { AuditModule } from '../../platform/src/audit/audit.module';
import { AUDIT_ENTITIES } from '../../platform/src/audit/storage/entities';
import { BillingModule } from '../../platform/src/billing/billing.module';
import { BILLING_ENTITIES } from '../../platform/src/billing/storage/entities';
import { BotsModule } from './bots/bots.module';
import { BOTS_ENTITIES } from './bots/storage/entities';
import { ChatsModule } from './chats/chats.module';
import { CHATS_ENTITIES } from './chats/storage/entities';
import { newDataSource, type DataSourceOptions, type EntityClass } from '../../platform/src/database/data-source';
import { EgressModule } from '../../platform/src/egress/egress.module';
import { EngineModule } from '../../platform/src/engine/engine.module';
import { ENGINE_MODULE_ENTITIES } from '../../platform/src/engine/engine-entities';
import { ErrorsModule } from '../../platform/src/errors/errors.module';
import { ERRORS_ENTITIES } from '../../platform/src/errors/storage/entities';
import { ExecutionsModule } from './executions/executions.module';
import { EXECUTIONS_ENTITIES } from './executions/storage/entities';
import { FilesModule } from './files/files.module';
import { FILES_ENTITIES } from './files/storage/entities';
import { HealthModule } from '../../platform/src/health/health.module';
import { LimitsModule } from '../../platform/src/limits/limits.module';
import { LIMITS_ENTITIES } from '../../platform/src/limits/storage/entities';
import { MembersModule } from '../../platform/src/members/members.module';
import { MemoryModule } from './memory/memory.module';
import { MEMORY_KEYED_STORE } from './memory/memory-rekey';
import { MEMORY_ENTITIES } from './memory/storage/entities';
import { MetricsModule } from '../../platform/src/metrics/metrics.module';
import { ModelProvidersModule } from '../../platform/src/model-providers/model-providers.module';
import { MODEL_PROVIDERS_ENTITIES } from '../../platform/src/model-providers/storage/entities';
import { ModelsModule } from '../../platform/src/models/models.module';
import { ObjectStoreModule } from '../../platform/src/object-store/object-store.module';
import { OrganizationsModule } from '../../platform/src/organizations/organizations.module';
import { ORGANIZATIONS_ENTITIES } from '../../platform/src/organizations/storage/entities';
import type { KeyedStore } from '../../platform/src/rekey/keyed-store';
import { runRekey, type RekeyOptions, type RekeyReport } from '../../platform/src/rekey/rekey';
import { PLATFORM_SEALED_COLUMNS } from '../../platform/src/rekey/sealed-columns';
import { RemindersModule } from './reminders/reminders.module';
import { REMINDERS_ENTITIES } from './reminders/storage/entities';
import { RetentionModule } from './retention/retention.module';
import { RETENTION_ENTITIES } from './retention/storage/entities';
import { SealingModule } from '../../platform/src/sealing/sealing.module';
import { SEALING_ENTITIES } from '../../platform/src/sealing/storage/entities';
import { SERVICES_ENTITIES } from '../../platform/src/services/storage/entities';
import { SsoModule } from './sso/sso.module';
import { SSO_ENTITIES } from './sso/storage/entities';
import { TracingModule } from '../../platform/src/tracing/tracing.module';
import { USAGE_ENTITIES } from '../../platform/src/usage/storage/entities';
import { ToolCallsModule } from '../../platform/src/tool-calls/tool-calls.module';
import { TurnCoreModule } from '../../platform/src/turn-core/turn-core.module';
import { UsageModule } from '../../platform/src/usage/usage.module';
import { VAULT_ENTITIES } from '../../platform/src/vaults/storage/entities';
import { VaultsModule } from '../../platform/src/vaults/vaults.module';

/**
 * One module of the product as the composition root sees it: its Nest module (which registers its
 * own command and query handlers, workflows and tools), the TypeORM entities its storage/ folder
 * declares (storage/entities.ts) and, for `openbot rekey`, its sealed columns that go with a
 * key-derived index. A folder without a Nest module of its own (services: its table is written by
 * the features that act as services) brings only its entities.
 */
export interface ProductModule {
  readonly module: Type | null;
  readonly entities: readonly EntityClass[];
  readonly keyedStores?: readonly KeyedStore[];
}

/**
 * The composition root's ONE list of the product's modules, platform and features alike, each
 * named once, in the order the node imports them. The platform never names a feature: the Nest
 * modules (OpenbotModule), the DataSource's entities (DatabaseModule, migrations, ormconfig.ts,
 * the schema-drift check) and what `openbot rekey` reseals are all derived from this list, and
 * test/repo/feature-registration.spec.ts fails when a folder's module or entities are left out of
 * it. Adding a feature is one line here.
 */
export const PRODUCT_MODULES: readonly ProductModule[] = [
  { module: MetricsModule, entities: [] },
  { module: TracingModule, entities: [] },
  { module: SealingModule, entities: SEALING_ENTITIES },
  { module: VaultsModule, entities: VAULT_ENTITIES },
  { module: EgressModule, entities: [] },
  { module: ObjectStoreModule, entities: [] },
  { module: HealthModule, entities: [] },
  { module: ErrorsModule, entities: ERRORS_ENTITIES },
  { module: LimitsModule, entities: LIMITS_ENTITIES },
  { module: AccessModule, entities: [] },
  { module: OrganizationsModule, entities: ORGANIZATIONS_ENTITIES },
  { module: null, entities: SERVICES_ENTITIES },
  { module: ApiKeysModule, entities: API_KEYS_ENTITIES },
  { module: MembersModule, entities: [] },
  { module: AuditModule, entities: AUDIT_ENTITIES },
  { module: BillingModule, entities: BILLING_ENTITIES },
  { module: SsoModule, entities: SSO_ENTITIES },
  { module: ModelProvidersModule, entities: MODEL_PROVIDERS_ENTITIES },
  { module: ModelsModule, entities: [] },
  { module: TurnCoreModule, entities: [] },
  { module: ToolCallsModule, entities: [] },
  { module: AppsModule, entities: APPS_ENTITIES },
  { module: AppOAuthModule, entities: APP_OAUTH_ENTITIES },
  { module: AppCatalogModule, entities: APP_CATALOG_ENTITIES },
  { module: BotsModule, entities: BOTS_ENTITIES },
  { module: MemoryModule, entities: MEMORY_ENTITIES, keyedStores: [MEMORY_KEYED_STORE] },
  { module: ChatsModule, entities: CHATS_ENTITIES },
  { module: UsageModule, entities: USAGE_ENTITIES },
  { module: EngineModule, entities: ENGINE_MODULE_ENTITIES },
  { module: ExecutionsModule, entities: EXECUTIONS_ENTITIES },
  { module: ApprovalsModule, entities: APPROVALS_ENTITIES },
  { module: RemindersModule, entities: REMINDERS_ENTITIES },
  { module: FilesModule, entities: FILES_ENTITIES },
  { module: RetentionModule, entities: RETENTION_ENTITIES },
];

/** Every TypeORM entity of the product (the engine's included); the schema-drift test compares them with the migrations. */
export const ENTITIES: readonly EntityClass[] = PRODUCT_MODULES.flatMap((m) => m.entities);

/** The product's DataSource (server, migrate command, ormconfig.ts, tests): the platform's shape with every module's entities. */
export function createDataSource(options: DataSourceOptions): ReturnType<typeof newDataSource> {
  return newDataSource({ ...options, entities: ENTITIES });
}

/** The features' sealed columns that go with a key-derived index (memory's content and word index). */
const KEYED_STORES: readonly KeyedStore[] = PRODUCT_MODULES.flatMap((m) => m.keyedStores ?? []);

/**
 * Every column that holds an envelope of the Sealer, in one place: `openbot rekey` reseals each
 * of them under the current master key and counts what is left under other keys (decision 071).
 * A repo test (test/repo/sealed-columns.spec.ts) fails when a migration adds a `bytea` or
 * `*key_id` column that is neither here nor on its list of unkeyed hashes.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [...PLATFORM_SEALED_COLUMNS, ...KEYED_STORES.map((store) => store.column)];

/** `openbot rekey` over everything the product seals (see runRekey). */
export function rekey(options: RekeyOptions): Promise<RekeyReport> {
  return runRekey(options, { columns: SEALED_COLUMNS, stores: KEYED_STORES });
}
