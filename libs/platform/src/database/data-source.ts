import { PreparedClient } from '@openbot/engine/node';
import { DataSource, type EntitySchema, type MigrationInterface } from 'typeorm';

/** A TypeORM migration class, as handed to createDataSource and OpenbotModule.forRoot. */
export type MigrationClass = new () => MigrationInterface;

/** A TypeORM entity class (or schema), as a feature lists it in its storage/entities.ts. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for an entity class
export type EntityClass = Function | EntitySchema;

export interface DataSourceOptions {
  readonly url: string;
  readonly migrations?: ReadonlyArray<new () => MigrationInterface>;
  readonly poolSize?: number;
  readonly applicationName?: string;
}

/**
 * The one DataSource shape used by the server, the migrate command, ormconfig.ts and tests, for
 * the entities the composition root hands in (every module's storage/entities.ts, collected in
 * libs/features/src/features.ts: the platform names no feature). It never synchronizes the schema:
 * only migrations change it (MIG-01).
 */
export function newDataSource(options: DataSourceOptions & { readonly entities: readonly EntityClass[] }): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: [...options.entities],
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
