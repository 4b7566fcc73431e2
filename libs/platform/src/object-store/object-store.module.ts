import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { join } from 'node:path';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { FsObjectStore } from './fs-object-store';
import { OBJECT_STORE, type ObjectStore } from './object-store';
import { S3ObjectStore } from './s3-object-store';

/** The adapter `OBJECT_STORE` names (docs/operating.md "Configuration"). */
export function objectStoreOf(config: Pick<RuntimeConfig, 'objectStore' | 'dataDir'>): ObjectStore {
  return config.objectStore.kind === 's3' ? new S3ObjectStore(config.objectStore) : new FsObjectStore(join(config.dataDir, 'objects'));
}

@Injectable()
class ObjectStoreShutdown implements OnApplicationShutdown {
  constructor(@Inject(OBJECT_STORE) private readonly store: ObjectStore) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/** The node's one object store (ARCH-04): features depend on the port, never on an adapter. */
@Global()
@Module({
  providers: [{ provide: OBJECT_STORE, inject: [RUNTIME_CONFIG], useFactory: (config: RuntimeConfig) => objectStoreOf(config) }, ObjectStoreShutdown],
  exports: [OBJECT_STORE],
})
export class ObjectStoreModule {}
