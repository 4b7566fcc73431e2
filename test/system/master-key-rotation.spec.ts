import { SEALED_COLUMNS } from '@openbot/features';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, eventsUntilEnd, sendMessage, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * A real master-key rotation (decision 071): secrets of every kind (a provider's API key, a Vault
 * item, a literal tool header, memories, executions with their events and calls) are written
 * under k1; the server restarts with k2 current and k1 old; the compiled server's `openbot rekey`
 * runs twice; the server restarts with k2 alone. Every secret still opens where it is bound, and
 * every memory still matches search, both before and after rekey.
 */

jest.setTimeout(240_000);

const MAIN = join(__dirname, '..', '..', 'dist', 'apps', 'server', 'src', 'main.js');
const PROVIDER_KEY = 'sk-ROTATION-provider-0123456789';
const VAULT_TOKEN = 'tok-ROTATION-vault-0123456789';
const LITERAL_HEADER = 'lit-ROTATION-header-0123456789';
const PARAMS = { type: 'object', properties: { q: { type: 'string' } } };

interface Key {
  readonly id: string;
  readonly key: Buffer;
}
const k1: Key = { id: 'k1', key: randomBytes(32) };
const k2: Key = { id: 'k2', key: randomBytes(32) };
const envValue = (key: Key): string => `${key.id}:${key.key.toString('base64')}`;

/** `openbot rekey` of the compiled server against the test database. */
function runRekey(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(clean)) if (name.startsWith('OPENBOT_') || name === 'DATABASE_URL' || name === 'NODE_ENV') delete clean[name];
  const child = spawn(process.execPath, [MAIN, 'rekey'], { env: { ...clean, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr })));
}

describe('master-key rotation', () => {
  let database: TestDatabase;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let dataDir: string;
  let t: TestApp | undefined;
  let secret: string;
  let botId: string;
  let chatId: string;

  const get = (path: string) => t!.http().get(path).set('authorization', bearer(secret));

  /** A Turn whose model calls the http tool once, then answers; its events. */
  async function turnCallingTool(content: string): Promise<{ executionId: string; events: EventBody[] }> {
    model.enqueue(toolCallReply(`c${randomBytes(3).toString('hex')}`, 'lookup', ['{"q":"x"}'], [1, 1]), textReply(['done'], [1, 1]));
    const admission = await sendMessage(t!, secret, chatId, content);
    return { executionId: admission.executionId, events: await eventsUntilEnd(t!, secret, admission.executionId) };
  }

  /** The item IDs `q` finds. */
  async function search(q: string): Promise<string[]> {
    const res = await get(`/v1/bots/${botId}/memories?q=${encodeURIComponent(q)}`).expect(200);
    return (res.body as { data: Array<{ id: string }> }).data.map((m) => m.id);
  }

  /** Rows of every sealed column, and memory word indexes, per key ID. */
  async function keyIds(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const column of SEALED_COLUMNS) {
      const rows = await database.query<{ key_id: string; n: number }>(
        `SELECT "${column.keyIdColumn}" AS key_id, count(*)::int AS n FROM "${column.table}" WHERE "${column.keyIdColumn}" IS NOT NULL GROUP BY 1`,
      );
      for (const row of rows) counts[row.key_id] = (counts[row.key_id] ?? 0) + row.n;
    }
    for (const row of await database.query<{ key_id: string; n: number }>('SELECT words_key_id AS key_id, count(*)::int AS n FROM memory_items GROUP BY 1')) {
      counts[row.key_id] = (counts[row.key_id] ?? 0) + row.n;
    }
    return counts;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    tools.fallback = jsonReply(200, { modelOutput: 'found' });
    dataDir = mkdtempSync(join(tmpdir(), 'openbot-rekey-'));
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([model?.close(), tools?.close()]);
    await database?.drop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('[SEC-01] rekey reseals every secret and re-indexes memory under the new key: after the old key is dropped, everything opens and matches', async () => {
    // 1. Everything written under k1.
    t = await startTestApp({ database, masterKey: k1 });
    const org = await t.createOrganization('Rotation');
    secret = org.secret;
    await t.http().post('/v1/model-providers').set('authorization', bearer(secret)).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl, apiKey: PROVIDER_KEY }).expect(201);
    const vault = await t.http().post('/v1/vaults').set('authorization', bearer(secret)).send({ name: 'keys' }).expect(201);
    const item = await t
      .http()
      .post(`/v1/vaults/${(vault.body as { id: string }).id}/items`)
      .set('authorization', bearer(secret))
      .send({ name: 'api', fields: { token: VAULT_TOKEN }, allowedHosts: [new URL(tools.url()).host] })
      .expect(201);
    const headers = { 'X-Literal': LITERAL_HEADER, Authorization: { vaultItemId: (item.body as { id: string }).id, field: 'token', prefix: 'Bearer ' } };
    const bot = await t
      .http()
      .post('/v1/bots')
      .set('authorization', bearer(secret))
      .send({ name: 'Rotated', model: 'fake/gpt-test', memory: { enabled: true, learn: false }, tools: [{ name: 'lookup', description: 'Looks up', parameters: PARAMS, kind: 'http', url: tools.url(), headers }] })
      .expect(201);
    botId = (bot.body as { id: string }).id;
    chatId = ((await t.http().post('/v1/chats').set('authorization', bearer(secret)).send({ botId }).expect(201)).body as { id: string }).id;
    const memories: Record<string, string> = {};
    for (const content of ['The Zurich warehouse opens at six', 'Invoices go to billing@rotation.test', 'The Oslo office keeps the spare keys']) {
      const res = await t.http().post(`/v1/bots/${botId}/memories`).set('authorization', bearer(secret)).send({ content }).expect(201);
      memories[content] = (res.body as { id: string }).id;
    }
    const zurich = memories['The Zurich warehouse opens at six']!;
    const before = await turnCallingTool('Where is the Zurich warehouse?');
    expect(before.events.find((e) => e.type === 'memory.read')!.ids).toEqual([zurich]);
    await t.close();
    t = undefined;
    expect(Object.keys(await keyIds())).toEqual(['k1']);

    // 2. k2 current, k1 retired: new writes use k2; what k1 sealed or indexed still opens and matches.
    t = await startTestApp({ database, masterKey: k2, env: { OPENBOT_MASTER_KEYS_OLD: envValue(k1) } });
    expect(await search('zurich warehouse')).toEqual([zurich]);
    const added = await t.http().post(`/v1/bots/${botId}/memories`).set('authorization', bearer(secret)).send({ content: 'The Zurich canteen serves rösti' }).expect(201);
    const canteen = (added.body as { id: string }).id;
    expect(await search('zurich')).toEqual([zurich, canteen]);
    await t.close();
    t = undefined;
    expect(Object.keys(await keyIds()).sort()).toEqual(['k1', 'k2']);

    // 3. rekey, twice: the first reseals and re-indexes everything, the second finds nothing left.
    const env = { DATABASE_URL: database.url, OPENBOT_DATA_DIR: dataDir, OPENBOT_MASTER_KEY: envValue(k2), OPENBOT_MASTER_KEYS_OLD: envValue(k1) };
    const first = await runRekey(env);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('every old key may leave OPENBOT_MASTER_KEYS_OLD') });
    expect(first.stderr).toMatch(/sealed_records\.data: \d+ resealed/);
    expect(first.stderr).toMatch(/memory_items: 3 contents resealed, 3 word indexes rebuilt/);
    const second = await runRekey(env);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('done: 0 resealed, 0 memory word indexes rebuilt, 0 unreadable') });
    expect(Object.keys(await keyIds())).toEqual(['k2']);

    // 4. k2 alone: every secret opens where it is bound, every memory opens and matches.
    t = await startTestApp({ database, masterKey: k2 });
    const sentBefore = { model: model.requests.length, tools: tools.requests.length };
    const after = await turnCallingTool('Is the Zurich warehouse open?');
    expect(after.events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(after.events.find((e) => e.type === 'memory.read')!.ids).toEqual([zurich, canteen]);
    const modelRequests = model.requests.slice(sentBefore.model);
    expect(modelRequests.length).toBeGreaterThan(0);
    for (const request of modelRequests) expect(request.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    const toolRequest = tools.requests.at(-1)!;
    expect(tools.requests.length).toBe(sentBefore.tools + 1);
    expect(toolRequest.headers['x-literal']).toBe(LITERAL_HEADER);
    expect(toolRequest.headers.authorization).toBe(`Bearer ${VAULT_TOKEN}`);
    // The Turn written under k1 still reads: its events, calls and state were resealed.
    const oldEvents = await eventsUntilEnd(t, secret, before.executionId);
    expect(oldEvents.map((e) => e.type)).toEqual(before.events.map((e) => e.type));
    await get(`/v1/executions/${before.executionId}`).expect(200);
    for (const [content, id] of Object.entries(memories)) expect(((await get(`/v1/bots/${botId}/memories/${id}`).expect(200)).body as { content: string }).content).toBe(content);
    expect(await search('zurich warehouse')).toEqual([zurich]);
    expect(await search('billing rotation')).toEqual([memories['Invoices go to billing@rotation.test']]);
    expect(await search('oslo keys')).toEqual([memories['The Oslo office keeps the spare keys']]);
  });
});
