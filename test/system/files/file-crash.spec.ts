import { S3ObjectStore } from '@openbot/platform';
import { randomBytes } from 'node:crypto';
import { startS3Server, type S3Server } from '../../support/s3-server';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { ADMIN_TOKEN, expectApi, startServerNode, stopAllServerNodes, waitUntil, type ServerNode } from '../chat/server-node';

jest.setTimeout(90_000);

const LEASE_SECONDS = 2;
/**
 * Short, so that the upload guard's wait for an abandoned upload ends within the test; long enough
 * that the test sees the orphan bytes before the guard removes them, also on a loaded machine
 * (3 s was not: a CI run found the bytes already gone).
 */
const UPLOAD_TIMEOUT_SECONDS = 10;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(4096)]);

let db: TestDatabase | null = null;
let s3: S3Server | null = null;
let store: S3ObjectStore | null = null;

beforeAll(async () => {
  [db, s3] = await Promise.all([createTestDatabase(), startS3Server()]);
  store = new S3ObjectStore(s3.config);
});

afterAll(async () => {
  await stopAllServerNodes();
  await store?.close();
  await s3?.stop();
  await db?.drop().catch(() => undefined);
});

function node(nodeId: string, faults?: string): Promise<ServerNode> {
  return startServerNode({
    databaseUrl: db!.url,
    nodeId,
    leaseSeconds: LEASE_SECONDS,
    ...(faults !== undefined ? { faults } : {}),
    env: { ...s3!.env, OPENBOT_FILE_UPLOAD_TIMEOUT_SECONDS: String(UPLOAD_TIMEOUT_SECONDS) },
  });
}

async function organization(on: ServerNode): Promise<{ organizationId: string; secret: string }> {
  const org = await expectApi<{ organization: { id: string }; apiKey: { secret: string } }>(201, on, 'POST', '/v1/organizations', {
    token: ADMIN_TOKEN,
    body: { name: `Files ${randomBytes(3).toString('hex')}` },
  });
  return { organizationId: org.organization.id, secret: org.apiKey.secret };
}

function upload(on: ServerNode, secret: string, bytes: Buffer): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'pixel.png');
  return fetch(`${on.base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
}

async function executionOf(id: string): Promise<{ state: string; generation: number; owner_node: string | null }> {
  const [row] = await db!.query<{ state: string; generation: number; owner_node: string | null }>('SELECT state, generation, owner_node FROM executions WHERE id = $1', [id]);
  return row!;
}

/**
 * Files across a node's death (two real server processes on one database and one s3rver):
 * the bytes and the metadata live in two stores, and a kill -9 between the two writes of an
 * upload, or between the two deletions of a delete, must leave nothing behind once recovery ran.
 */
describe('files when the node dies between the two stores (two real server processes)', () => {
  it('[FW-08] kill -9 after an upload wrote its bytes and before its metadata committed: the other node’s recovery removes the orphan bytes and the row', async () => {
    const [a, b] = await Promise.all([node('files-a', 'file.object.written=kill'), node('files-b')]);
    const org = await organization(b);
    // A dies at the fault point: the bytes are in S3, the row is still `uploading`.
    await expect(upload(a, org.secret, PNG)).rejects.toThrow();
    expect((await a.exited).signal).toBe('SIGKILL');
    const [row] = await db!.query<{ id: string; state: string; object_key: string; guard_execution_id: string }>(
      'SELECT id, state, object_key, guard_execution_id FROM files WHERE organization_id = $1',
      [org.organizationId],
    );
    expect(row).toMatchObject({ state: 'uploading' });
    expect(await store!.head(row!.object_key)).toEqual({ bytes: PNG.length });
    // The file is invisible meanwhile.
    const page = await expectApi<{ data: unknown[] }>(200, b, 'GET', '/v1/files', { token: org.secret });
    expect(page.data).toEqual([]);

    // B takes the guard over once A's lease expired, waits out the upload's deadline, and removes both.
    await waitUntil(async () => ((await executionOf(row!.guard_execution_id)).state === 'completed' ? true : undefined), 60_000, () => `guard of ${row!.id}\n${b.tail()}`, 200);
    const guard = await executionOf(row!.guard_execution_id);
    expect(guard.owner_node === null || guard.owner_node === 'files-b').toBe(true);
    expect(guard.generation).toBeGreaterThanOrEqual(2);
    expect(await db!.query('SELECT 1 FROM files WHERE id = $1', [row!.id])).toEqual([]);
    expect(await store!.head(row!.object_key)).toBeNull();
    await b.kill('SIGTERM');
  });

  it('[FW-08] kill -9 in the middle of a deletion (the object delete was sent, its result not saved): the other node finishes it; no row, no bytes', async () => {
    const [a, b] = await Promise.all([node('files-c', 'call.sending.committed=kill'), node('files-d')]);
    const org = await organization(b);
    const response = await upload(b, org.secret, PNG);
    expect(response.status).toBe(201);
    const file = (await response.json()) as { id: string };
    const key = `files/${org.organizationId}/${file.id}`;
    expect(await store!.head(key)).toEqual({ bytes: PNG.length });

    // A accepts the delete, so A owns the `file.delete` execution, and dies when its object call is marked sending.
    const { executionId } = await expectApi<{ executionId: string }>(202, a, 'DELETE', `/v1/files/${file.id}`, { token: org.secret });
    expect((await a.exited).signal).toBe('SIGKILL');
    // The metadata went with the command; the bytes are still there: the crash came between the two.
    expect(await db!.query('SELECT 1 FROM files WHERE id = $1', [file.id])).toEqual([]);
    expect(await store!.head(key)).toEqual({ bytes: PNG.length });

    await waitUntil(async () => ((await executionOf(executionId)).state === 'completed' ? true : undefined), 30_000, () => `file.delete ${executionId}\n${b.tail()}`, 200);
    expect((await executionOf(executionId)).generation).toBeGreaterThanOrEqual(2);
    expect(await store!.head(key)).toBeNull();
    const calls = await db!.query<{ status: string }>(`SELECT status FROM execution_calls WHERE execution_id = $1`, [executionId]);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    await expectApi(404, b, 'GET', `/v1/files/${file.id}`, { token: org.secret });
    await b.kill('SIGTERM');
  });
});
