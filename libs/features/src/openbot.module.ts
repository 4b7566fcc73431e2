import { Global, Module, type DynamicModule } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import type { MigrationInterface } from 'typeorm';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../platform/src/config/runtime-config';
import { DatabaseModule } from '../../platform/src/database/database.module';
import { ENTITIES, PRODUCT_MODULES } from './features';

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

/** Every module of the product (features.ts names each once), composed for one node. */
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
          entities: ENTITIES,
          nodeId: options.config.nodeId,
          poolSize: options.config.databasePoolSize,
        }),
        ...PRODUCT_MODULES.flatMap((m) => (m.module === null ? [] : [m.module])),
      ],
      exports: [CqrsModule, ConfigModule],
    };
  }
}
