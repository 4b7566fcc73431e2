import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type MigrationInterface } from 'typeorm';
import { newDataSource, type EntityClass } from './data-source';
import { poolOf } from './pool';
import { Database } from './sql';

class DataSourceCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/** The node's one connection pool; opened while the module initializes, closed at shutdown. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(options: {
    readonly url: string;
    readonly migrations: ReadonlyArray<new () => MigrationInterface>;
    /** Every module's entities, handed in by the composition root (libs/features/src/features.ts): the platform names no feature. */
    readonly entities: readonly EntityClass[];
    readonly nodeId: string;
    /** Connections of the pool (OPENBOT_DATABASE_POOL_SIZE); at C Turns in flight each holds one for a few statements at a time. */
    readonly poolSize: number;
  }): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DataSource,
          useFactory: async (): Promise<DataSource> =>
            newDataSource({
              url: options.url,
              migrations: options.migrations,
              entities: options.entities,
              poolSize: options.poolSize,
              applicationName: `openbot ${options.nodeId}`.slice(0, 63),
            }).initialize(),
        },
        // Handlers and workflows run SQL through this, on the pool TypeORM owns (TypeORM itself is for entities and migrations).
        { provide: Database, inject: [DataSource], useFactory: (dataSource: DataSource) => new Database(poolOf(dataSource)) },
        DataSourceCloser,
      ],
      exports: [DataSource, Database],
    };
  }
}
