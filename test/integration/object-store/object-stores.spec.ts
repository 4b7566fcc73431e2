import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsObjectStore, S3ObjectStore } from '@openbot/openbot';
import { startS3Server } from '../../support/s3-server';
import { objectStoreContract } from './object-store-contract';

objectStoreContract('filesystem under the data dir', async () => {
  const root = await mkdtemp(join(tmpdir(), 'openbot-objects-'));
  const store = new FsObjectStore(root);
  return {
    store,
    close: async () => {
      // Nothing is left behind by failed or aborted writes: no temporary file either.
      const left = await readdir(join(root, 'contract'));
      expect(left.filter((name) => name.startsWith('.'))).toEqual([]);
      await rm(root, { recursive: true, force: true });
    },
  };
});

objectStoreContract('S3 against s3rver on loopback', async () => {
  const server = await startS3Server();
  const store = new S3ObjectStore(server.config);
  return {
    store,
    close: async () => {
      await store.close();
      await server.stop();
    },
  };
});
