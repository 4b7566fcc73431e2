import { rekey, SEALED_COLUMNS } from '@openbot/features';
import { Keyring, Sealer, associatedData } from '@openbot/platform';
import { newId } from '@openbot/domain';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * `rekey` batch by batch (decision 071): each batch commits on its own, so a run stopped midway
 * keeps what it did and the next run finishes the rest; a record under a key that is not
 * configured is reported, never dropped, and keeps rekey from saying the old keys may go.
 * test/system/master-key-rotation.spec.ts runs the command itself across restarts.
 */

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };

class Stopped extends Error {}

describe('rekey batches', () => {
  let database: TestDatabase;
  let pool: Pool;
  let t: TestApp | undefined;

  /** Rows of every sealed column under each key ID. */
  async function byKey(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const column of SEALED_COLUMNS) {
      const rows = await database.query<{ key_id: string; n: number }>(
        `SELECT "${column.keyIdColumn}" AS key_id, count(*)::int AS n FROM "${column.table}" WHERE "${column.keyIdColumn}" IS NOT NULL GROUP BY 1`,
      );
      for (const row of rows) counts[row.key_id] = (counts[row.key_id] ?? 0) + row.n;
    }
    return counts;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    t = await startTestApp({ database, masterKey: k1 });
    const org = await t.createOrganization('Batches');
    await t.http().post('/v1/model-providers').set('authorization', bearer(org.secret)).send({ name: 'p', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9', apiKey: 'sk-batches' }).expect(201);
    const vault = await t.http().post('/v1/vaults').set('authorization', bearer(org.secret)).send({ name: 'v' }).expect(201);
    for (let i = 0; i < 5; i++) {
      await t.http().post(`/v1/vaults/${(vault.body as { id: string }).id}/items`).set('authorization', bearer(org.secret)).send({ name: `item-${i}`, fields: { token: `tok-${i}` }, allowedHosts: ['api.example.com'] }).expect(201);
    }
    await t.close();
    t = undefined;
    pool = new Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await t?.close();
    await pool?.end();
    await database?.drop();
  });

  it('[SEC-01] a run stopped after its first batch keeps that batch; the next run finishes the rest and then finds nothing', async () => {
    const before = await byKey();
    expect(Object.keys(before)).toEqual(['k1']);
    const total = before.k1!;
    let lines = 0;
    let first = '';
    const stopping = rekey({ pool, masterKey: k2, oldMasterKeys: [k1], batchSize: 2, log: (line) => {
      // The first line announces the run; the second reports the first committed batch: stop there.
      if (++lines === 2) {
        first = line;
        throw new Stopped(line);
      }
    } });
    await expect(stopping).rejects.toBeInstanceOf(Stopped);
    const done = Number(/: (\d+) resealed/.exec(first)?.[1]);
    expect(done).toBeGreaterThanOrEqual(1);
    expect(done).toBeLessThanOrEqual(2);
    const stopped = await byKey();
    expect(stopped).toEqual({ k1: total - done, k2: done });
    const log: string[] = [];
    const finished = await rekey({ pool, masterKey: k2, oldMasterKeys: [k1], batchSize: 2, log: (line) => log.push(line) });
    expect(finished.remaining.size).toBe(0);
    expect(finished.resealed).toBe(total - done);
    // Batches of two: the Vault items' records took several transactions.
    expect(log.filter((line) => line.startsWith('sealed_records.data:')).length).toBeGreaterThanOrEqual(3);
    expect(await byKey()).toEqual({ k2: total });
    expect(log.at(-1)).toContain('every old key may leave OPENBOT_MASTER_KEYS_OLD');
    const again = await rekey({ pool, masterKey: k2, oldMasterKeys: [k1], log: () => undefined });
    expect({ resealed: again.resealed, reindexed: again.reindexed, remaining: again.remaining.size }).toEqual({ resealed: 0, reindexed: 0, remaining: 0 });
  });

  it('a record under a key that is not configured is counted and kept: rekey does not say the old keys may go', async () => {
    const k0 = { id: 'k0', key: randomBytes(32) };
    const id = newId();
    const envelope = new Sealer(new Keyring(k0)).seal(Buffer.from('"lost"'), associatedData(id, 'test.orphan'));
    await database.query('INSERT INTO sealed_records (id, purpose, key_id, data) VALUES ($1, $2, $3, $4)', [id, 'test.orphan', envelope.keyId, envelope.data]);
    const log: string[] = [];
    const report = await rekey({ pool, masterKey: k2, oldMasterKeys: [k1], log: (line) => log.push(line) });
    expect(report.unreadable).toBe(1);
    expect([...report.remaining]).toEqual([['k0', 1]]);
    expect(log.join('\n')).toContain('1 records still under key "k0"');
    expect(log.join('\n')).not.toContain('may leave');
    const [row] = await database.query<{ key_id: string }>('SELECT key_id FROM sealed_records WHERE id = $1', [id]);
    expect(row!.key_id).toBe('k0');
  });
});
