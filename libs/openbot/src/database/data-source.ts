import { PreparedClient } from '@openbot/engine';
import { DataSource, type MigrationInterface } from 'typeorm';
import { ENTITIES } from './entities';

/** A TypeORM migration class, as handed to createDataSource and OpenbotModule.forRoot. */
export type MigrationClass = new () => MigrationInterface;

export interface DataSourceOptions {
  readonly url: string;
  readonly migrations?: ReadonlyArray<new () => MigrationInterface>;
  readonly poolSize?: number;
  readonly applicationName?: string;
}

/**
 * The one DataSource shape used by the server, the migrate command, ormconfig.ts and tests.
 * It never synchronizes the schema: only migrations change it (MIG-01).
 */
export function createDataSource(options: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: [...ENTITIES],
    migrations: [...(options.migrations ?? [])],
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'openbot',
    extra: {
      // A request that needs the database answers 503 quickly instead of hanging (docs/http-api.md).
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      pipeline: true,
      // Named statements skip the per-run row description (decision 062).
      Client: PreparedClient,
    },
  });
}
