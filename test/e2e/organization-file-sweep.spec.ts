import { Engine } from '@openbot/engine';
import { submitOrganizationFileSweep } from '@openbot/features';
import { FsObjectStore, S3ObjectStore, type ObjectStore } from '@openbot/platform';
import type { ExecutionId } from '@openbot/domain';
import { Database } from '../../libs/platform/src/database/sql';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { bearer } from '../support/chat-fixture';
import { startS3Server, type S3Server } from '../support/s3-server';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Deleting an organization owes its file objects a removal (FW-08, decision 036): the
 * transaction that deletes the organization's row submits `files.organization-sweep`, which then
 * removes every object under `files/<organizationId>/` from the store, page by page, as retryable
 * durable work. Nothing of the organization is left; nothing of another one is touched.
 */
describe.each(['fs', 's3'] as const)('[FW-08] an organization deleted on the %s object store leaves no file objects', (kind) => {
  let t: TestApp;
  let s3: S3Server | null = null;
  let dataDir: string;
  let store: ObjectStore;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'openbot-org-sweep-'));
    if (kind === 's3') s3 = await startS3Server();
    t = await startTestApp({ env: { OPENBOT_DATA_DIR: dataDir, ...(s3?.env ?? {}) } });
    store = s3 ? new S3ObjectStore(s3.config) : new FsObjectStore(join(dataDir, 'objects'));
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
    await s3?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const upload = async (secret: string, name: string): Promise<string> =>
    ((await t.http().post('/v1/files').set('authorization', bearer(secret)).attach('file', randomBytes(300), { filename: name, contentType: 'application/octet-stream' }).expect(201)).body as { id: string }).id;

  it('[FW-08] the sweep submitted with the deletion removes every object of the organization (also one no row names), and only its own', async () => {
    const doomed = await t.createOrganization('Doomed');
    const kept = await t.createOrganization('Kept');
    for (let i = 0; i < 3; i++) await upload(doomed.secret, `d${i}.bin`);
    const keptFile = await upload(kept.secret, 'k.bin');
    // An object no row names (an upload that never committed before its guard ran): the store is swept, not the rows.
    await store.put(`files/${doomed.organizationId}/${'0190c3f0-1234-7abc-8def-0123456789ab'}`, Readable.from([Buffer.from('stray')]));
    expect(await store.list(`files/${doomed.organizationId}/`, 100)).toHaveLength(4);

    const engine = t.app.get(Engine);
    const executionId = await t.app.get(Database).transaction(async (tx) => {
      const sweep = await submitOrganizationFileSweep(engine.in(tx), doomed.organizationId);
      await tx.count('DELETE FROM organizations WHERE id = $1', [doomed.organizationId]);
      return sweep;
    });
    // The rows went with the organization at once; the execution owns the bytes from then on.
    expect((await t.database.query('SELECT id FROM files WHERE organization_id = $1', [doomed.organizationId])).length).toBe(0);
    for (const deadline = Date.now() + 20_000; ; ) {
      const state = (await engine.get(executionId as ExecutionId))?.state;
      if (state === 'completed') break;
      if (state === 'failed' || state === 'cancelled' || Date.now() > deadline) throw new Error(`the sweep is ${state}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await store.list(`files/${doomed.organizationId}/`, 100)).toEqual([]);
    expect(await store.list(`files/${kept.organizationId}/`, 100)).toEqual([`files/${kept.organizationId}/${keptFile}`]);
  });
});
