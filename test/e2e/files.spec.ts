import { FsObjectStore, OBJECT_STORE, S3ObjectStore, type ObjectStore } from '@openbot/platform';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer } from '../support/chat-fixture';
import { startS3Server, type S3Server } from '../support/s3-server';
import { startTestApp, type TestApp } from '../support/test-app';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(200)]);
const MAX = 1024 * 1024;

interface FileBody {
  id: string;
  name: string;
  contentType: string;
  bytes: number;
  sha256: string;
  createdAt: string;
}

async function waitUntil<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Files over the API (decision 028) on both object-store adapters: streaming upload with sha256
 * and content-type checks, metadata in PostgreSQL, download with etag, deletion as an
 * execution (FW-08), and nothing left behind by refused or broken-off uploads.
 */
describe.each(['fs', 's3'] as const)('[PLAT-03] files on the %s object store', (kind) => {
  let t: TestApp;
  let s3: S3Server | null = null;
  let dataDir: string;
  let store: ObjectStore;
  let owner: { organizationId: string; secret: string };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'openbot-files-e2e-'));
    if (kind === 's3') s3 = await startS3Server();
    t = await startTestApp({ env: { OPENBOT_DATA_DIR: dataDir, OPENBOT_FILE_MAX_BYTES: String(MAX), ...(s3?.env ?? {}) } });
    store = s3 ? new S3ObjectStore(s3.config) : new FsObjectStore(join(dataDir, 'objects'));
    owner = await t.createOrganization('Files');
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
    await s3?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const upload = (secret: string, bytes: Buffer, filename: string, contentType: string) =>
    t.http().post('/v1/files').set('authorization', bearer(secret)).attach('file', bytes, { filename, contentType });
  const objectKeyOf = (organizationId: string, fileId: string) => `files/${organizationId}/${fileId}`;
  const rowsOf = async (organizationId: string) => t.database.query<{ id: string; state: string }>('SELECT id, state FROM files WHERE organization_id = $1', [organizationId]);
  /** Every upload guard of the organization has ended (refused uploads signal theirs at once). */
  const guardsSettled = (organizationId: string) =>
    waitUntil(async () => {
      const guards = await t.database.query<{ state: string }>(`SELECT state FROM executions WHERE organization_id = $1 AND workflow = 'file.upload-guard'`, [organizationId]);
      if (guards.some((g) => g.state === 'failed')) throw new Error('an upload guard failed');
      return guards.every((g) => g.state === 'completed') ? true : undefined;
    }, 'upload guards end');

  it('[PLAT-03] upload keeps name, content type, size and sha256; metadata, list and content answer them', async () => {
    const res = await upload(owner.secret, PNG, 'pixel.png', 'image/png').expect(201);
    const file = res.body as FileBody;
    expect(file).toEqual({
      id: expect.any(String),
      name: 'pixel.png',
      contentType: 'image/png',
      bytes: PNG.length,
      sha256: createHash('sha256').update(PNG).digest('hex'),
      createdAt: expect.any(String),
    });
    expect((await t.http().get(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(200)).body).toEqual(file);
    const page = (await t.http().get('/v1/files').set('authorization', bearer(owner.secret)).expect(200)).body as { data: FileBody[] };
    expect(page.data.map((f) => f.id)).toContain(file.id);

    const content = await t.http().get(`/v1/files/${file.id}/content`).set('authorization', bearer(owner.secret)).buffer(true).parse((r, done) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(content.status).toBe(200);
    expect(Buffer.compare(content.body as Buffer, PNG)).toBe(0);
    expect(content.headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(PNG.length),
      etag: `"${file.sha256}"`,
      'x-content-type-options': 'nosniff',
    });
    expect(content.headers['content-disposition']).toMatch(/^attachment;/);
    await t.http().get(`/v1/files/${file.id}/content`).set('authorization', bearer(owner.secret)).set('if-none-match', `"${file.sha256}"`).expect(304);
    // The bytes are in the object store, the metadata in PostgreSQL.
    expect(await store.head(objectKeyOf(owner.organizationId, file.id))).toEqual({ bytes: PNG.length });
    expect(await rowsOf(owner.organizationId)).toContainEqual({ id: file.id, state: 'ready' });
  });

  it('[ARCH-04] the file routes use only the object-store port: the app holds the configured adapter, whose own storage keeps the bytes; a delete removes them there', async () => {
    expect(t.app.get(OBJECT_STORE)).toBeInstanceOf(kind === 's3' ? S3ObjectStore : FsObjectStore);
    const bytes = randomBytes(4096);
    const file = (await upload(owner.secret, bytes, 'port.bin', 'application/octet-stream').expect(201)).body as FileBody;
    // Another instance of the same adapter, on the same storage, reads what the app stored through the port.
    const stored: Buffer[] = [];
    for await (const chunk of (await store.get(objectKeyOf(owner.organizationId, file.id)))!) stored.push(chunk as Buffer);
    expect(Buffer.compare(Buffer.concat(stored), bytes)).toBe(0);
    await t.http().delete(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(202);
    await waitUntil(async () => ((await store.head(objectKeyOf(owner.organizationId, file.id))) === null ? true : undefined), 'the bytes to be deleted from the adapter');
  });

  it('a content type is kept in lower case; no content type is application/octet-stream', async () => {
    const text = (await upload(owner.secret, Buffer.from('hello'), 'a.txt', 'Text/Plain').expect(201)).body as FileBody;
    expect(text.contentType).toBe('text/plain');
  });

  it('an image or PDF content type the bytes contradict is 400 on `file`, and leaves nothing', async () => {
    for (const [type, name] of [['image/png', 'fake.png'], ['image/jpeg', 'fake.jpg'], ['application/pdf', 'fake.pdf'], ['image/webp', 'x.webp']]) {
      const res = await upload(owner.secret, Buffer.from('plain text, not an image or a PDF'), name!, type!).expect(400);
      expect(res.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'file' }] });
    }
    await guardsSettled(owner.organizationId);
    expect((await rowsOf(owner.organizationId)).filter((r) => r.state !== 'ready')).toEqual([]);
  });

  it('no file part, a part of another name, or a second part is 400 on `file`, and leaves nothing', async () => {
    const org = await t.createOrganization('Parts');
    const none = await t.http().post('/v1/files').set('authorization', bearer(org.secret)).field('note', 'x').expect(400);
    expect(none.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'file' }] });
    await t.http().post('/v1/files').set('authorization', bearer(org.secret)).attach('upload', PNG, { filename: 'p.png', contentType: 'image/png' }).expect(400);
    const two = await t
      .http()
      .post('/v1/files')
      .set('authorization', bearer(org.secret))
      .attach('file', PNG, { filename: 'a.png', contentType: 'image/png' })
      .attach('file', PNG, { filename: 'b.png', contentType: 'image/png' })
      .expect(400);
    expect(two.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'file' }] });
    const json = await t.http().post('/v1/files').set('authorization', bearer(org.secret)).send({ file: 'x' }).expect(400);
    expect(json.body).toMatchObject({ issues: [{ path: 'file' }] });
    await guardsSettled(org.organizationId);
    expect(await rowsOf(org.organizationId)).toEqual([]);
  });

  it('a file over OPENBOT_FILE_MAX_BYTES is 413, whether the length says so or the stream shows it, and leaves nothing', async () => {
    const org = await t.createOrganization('Large');
    const declared = await upload(org.secret, randomBytes(MAX * 2), 'big.bin', 'application/octet-stream');
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ type: 'PayloadTooLarge' });
    // Just over the limit: within the framing allowance, so the stream itself must stop it.
    const streamed = await upload(org.secret, randomBytes(MAX + 100), 'big.bin', 'application/octet-stream');
    expect(streamed.status).toBe(413);
    expect(streamed.body).toMatchObject({ type: 'PayloadTooLarge' });
    await guardsSettled(org.organizationId);
    expect(await rowsOf(org.organizationId)).toEqual([]);
    // Exactly the limit is fine.
    await upload(org.secret, randomBytes(MAX), 'max.bin', 'application/octet-stream').expect(201);
  });

  it('an upload that breaks off leaves no file: no row and no object', async () => {
    const org = await t.createOrganization('Broken');
    const server = t.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const boundary = 'openbot-broken';
    const head = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="half.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`;
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/files',
        headers: { authorization: bearer(org.secret), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(MAX - 1000) },
      });
      req.on('error', () => resolve());
      req.write(head);
      req.write(randomBytes(200 * 1024), () => {
        // Wait until the server holds the upload's row, then vanish mid-body.
        void waitUntil(async () => ((await rowsOf(org.organizationId)).length > 0 ? true : undefined), 'the upload started').then(() => {
          req.destroy();
          resolve();
        });
      });
    });
    await guardsSettled(org.organizationId);
    const rows = await rowsOf(org.organizationId);
    expect(rows).toEqual([]);
    const guards = await t.database.query<{ resource_id: string; state: string }>(
      `SELECT resource_id, state FROM executions WHERE organization_id = $1 AND workflow = 'file.upload-guard'`,
      [org.organizationId],
    );
    expect(guards).toHaveLength(1);
    expect(guards[0]!.state).toBe('completed');
    expect(await store.head(objectKeyOf(org.organizationId, guards[0]!.resource_id))).toBeNull();
    // A client that went away is no server fault: no error record for the request.
    expect(await t.database.query(`SELECT 1 FROM error_records WHERE origin = 'http POST /v1/files'`)).toEqual([]);
  });

  it('a multipart body that ends without its closing boundary is 400 on `file`, and leaves nothing', async () => {
    const org = await t.createOrganization('Truncated');
    const boundary = 'openbot-truncated';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="cut.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`),
      randomBytes(10_000),
    ]);
    const server = t.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const res = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/files',
        headers: { authorization: bearer(org.secret), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
      });
      req.on('error', reject);
      req.on('response', (answer) => {
        let text = '';
        answer.setEncoding('utf8').on('data', (c: string) => (text += c));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      });
      req.end(body);
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'file' }] });
    await guardsSettled(org.organizationId);
    expect(await rowsOf(org.organizationId)).toEqual([]);
  });

  it('another organization’s file answers 404 on every route, like an unknown or malformed ID', async () => {
    const file = (await upload(owner.secret, PNG, 'mine.png', 'image/png').expect(201)).body as FileBody;
    const other = await t.createOrganization('Other');
    for (const path of [`/v1/files/${file.id}`, `/v1/files/${file.id}/content`]) {
      const res = await t.http().get(path).set('authorization', bearer(other.secret)).expect(404);
      expect(res.body).toMatchObject({ type: 'FileNotFound' });
    }
    await t.http().delete(`/v1/files/${file.id}`).set('authorization', bearer(other.secret)).expect(404);
    await t.http().get('/v1/files/not-a-uuid').set('authorization', bearer(owner.secret)).expect(404);
    const theirs = (await t.http().get('/v1/files').set('authorization', bearer(other.secret)).expect(200)).body as { data: FileBody[] };
    expect(theirs.data).toEqual([]);
    // Still the owner's.
    await t.http().get(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(200);
  });

  it('[FW-08] delete answers 202 with a `file.delete` execution: the metadata is gone at once, the bytes once it completes', async () => {
    const file = (await upload(owner.secret, PNG, 'gone.png', 'image/png').expect(201)).body as FileBody;
    const key = objectKeyOf(owner.organizationId, file.id);
    const deleted = await t.http().delete(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(202);
    const { executionId } = deleted.body as { executionId: string };
    await t.http().get(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(404);
    await t.http().delete(`/v1/files/${file.id}`).set('authorization', bearer(owner.secret)).expect(404);
    await waitUntil(async () => {
      const res = await t.http().get(`/v1/executions/${executionId}`).set('authorization', bearer(owner.secret)).expect(200);
      return (res.body as { state: string }).state === 'completed' ? true : undefined;
    }, 'file.delete completes');
    expect(await store.head(key)).toBeNull();
  });
});
