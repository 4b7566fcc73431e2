import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsObjectStore, S3ObjectStore } from '@openbot/platform';
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

describe('filesystem store permissions (decision 074)', () => {
  it('security: objects are 0600 in 0700 folders, the root included, so other accounts on the host cannot read organizations\' files', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'openbot-objects-mode-'));
    // A root an older version created with the usual 0755.
    const root = join(parent, 'objects');
    const store = new FsObjectStore(root);
    try {
      await store.put('org-1/files/ab/cd/object', Readable.from([Buffer.from('secret')]));
      const mode = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);
      expect(await mode(join(root, 'org-1/files/ab/cd/object'))).toBe('600');
      for (const folder of ['', 'org-1', 'org-1/files', 'org-1/files/ab', 'org-1/files/ab/cd']) {
        expect({ folder, mode: await mode(join(root, folder)) }).toEqual({ folder, mode: '700' });
      }
      // An existing root that was 0755 is made 0700 at the next store's first write.
      await chmod(root, 0o755);
      await new FsObjectStore(root).put('org-1/files/other', Readable.from([Buffer.from('x')]));
      expect(await mode(root)).toBe('700');
      expect(await mode(join(root, 'org-1/files/other'))).toBe('600');
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
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
