import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type MigrationInterface } from 'typeorm';
import { createDataSource } from './data-source';

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
    readonly nodeId: string;
  }): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        {
          provide: DataSource,
          useFactory: async (): Promise<DataSource> =>
            createDataSource({
              url: options.url,
              migrations: options.migrations,
              applicationName: `openbot ${options.nodeId}`.slice(0, 63),
            }).initialize(),
        },
        DataSourceCloser,
      ],
      exports: [DataSource],
    };
  }
}
