import type { SealedRecordId } from '@openbot/domain';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { MasterKey } from '../../libs/platform/src/config/config';
import { createDataSource } from '../../libs/features/src/features';
import { poolOf } from '../../libs/platform/src/database/pool';
import { Database } from '../../libs/platform/src/database/sql';
import { Keyring } from '../../libs/platform/src/sealing/keyring';
import { SealedRecords } from '../../libs/platform/src/sealing/sealed-records';
import { SealedRecordUnreadable, Sealer } from '../../libs/platform/src/sealing/sealer';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

const k1: MasterKey = { id: 'k1', key: randomBytes(32) };
const k2: MasterKey = { id: 'k2', key: randomBytes(32) };
const SECRET = 'sk-live-PROVIDER-KEY-that-must-never-be-stored-in-clear';

interface Row {
  id: string;
  purpose: string;
  key_id: string;
  data: Buffer;
}

describe('SealedRecords on PostgreSQL', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let records: SealedRecords;
  let database: Database;

  const rowOf = async (id: string): Promise<Row> => {
    const [row] = await db.query<Row>('SELECT id, purpose, key_id, data FROM sealed_records WHERE id = $1', [id]);
    if (row === undefined) throw new Error(`no sealed record ${id}`);
    return row;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    database = new Database(poolOf(dataSource));
    records = new SealedRecords(new Sealer(new Keyring(k1)), database);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('[SEC-01] the stored row holds ciphertext only: the bytes never contain the plaintext', async () => {
    const value = { apiKey: SECRET, note: 'ünïcødé', nested: [1, { deep: SECRET }] };
    const id = await records.put('model-provider.api-key', value);
    const row = await rowOf(id);
    expect(row.key_id).toBe('k1');
    expect(row.purpose).toBe('model-provider.api-key');
    expect(Buffer.isBuffer(row.data)).toBe(true);
    for (const needle of [SECRET, 'PROVIDER-KEY', JSON.stringify(value), 'ünïcødé', '"apiKey"']) {
      expect(row.data.includes(Buffer.from(needle, 'utf8'))).toBe(false);
    }
    // Nothing in the whole table, read as text by PostgreSQL itself, holds the secret either.
    const [{ hits }] = await db.query<{ hits: string }>(
      `SELECT count(*) AS hits FROM sealed_records r WHERE r::text LIKE $1 OR position(convert_to($2, 'UTF8') IN r.data) > 0`,
      [`%${SECRET}%`, SECRET],
    );
    expect(Number(hits)).toBe(0);
  });

  it('[SEC-01] get() returns the value and its purpose', async () => {
    const value = { apiKey: SECRET, n: 42, list: [true, null, 'x'] };
    const id = await records.put('model-provider.api-key', value);
    await expect(records.get(id)).resolves.toEqual({ purpose: 'model-provider.api-key', value });
  });

  it('get() of every JSON value kind round-trips', async () => {
    for (const value of [null, 0, 'text', [], {}, { a: [1, 2, { b: 'c' }] }, 'x'.repeat(100_000)]) {
      const id = await records.put('test.value', value);
      expect((await records.get(id))?.value).toEqual(value);
    }
  });

  it('get() of an unknown record is null', async () => {
    await expect(records.get('0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b' as SealedRecordId)).resolves.toBeNull();
  });

  it('put() inside a transaction commits or rolls back with it', async () => {
    let kept: SealedRecordId | undefined;
    await database.transaction(async (tx) => {
      kept = await records.put('test.tx', { ok: true }, tx);
    });
    expect((await records.get(kept!))?.value).toEqual({ ok: true });

    let lost: SealedRecordId | undefined;
    await expect(
      database.transaction(async (tx) => {
        lost = await records.put('test.tx', { ok: false }, tx);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(lost).toBeDefined();
    await expect(records.get(lost!)).resolves.toBeNull();
  });

  it('[SEC-01] corrupting `data` with raw SQL makes get() fail with SealedRecordUnreadable', async () => {
    const id = await records.put('test.corrupt', { apiKey: SECRET });
    const length = (await rowOf(id)).data.length;
    // One bit in the ciphertext, then one in the wrapped data key, then a truncation.
    for (const [sql, params] of [
      [`UPDATE sealed_records SET data = set_byte(data, $2, get_byte(data, $2) # 1) WHERE id = $1`, [id, length - 1]],
      [`UPDATE sealed_records SET data = set_byte(data, $2, get_byte(data, $2) # 1) WHERE id = $1`, [id, 20]],
      [`UPDATE sealed_records SET data = substring(data FROM 1 FOR 40) WHERE id = $1`, [id]],
    ] as const) {
      await db.query(sql, [...params]);
      await expect(records.get(id)).rejects.toBeInstanceOf(SealedRecordUnreadable);
    }
  });

  it('[SEC-01] changing the clear purpose column makes the record unreadable (purpose is authenticated)', async () => {
    const id = await records.put('test.purpose-a', { apiKey: SECRET });
    await db.query(`UPDATE sealed_records SET purpose = 'test.purpose-b' WHERE id = $1`, [id]);
    await expect(records.get(id)).rejects.toBeInstanceOf(SealedRecordUnreadable);
  });

  it('[SEC-01] copying one row’s key_id and data onto another row fails: the envelope is bound to its record', async () => {
    const victim = await records.put('model-provider.api-key', { apiKey: 'victim-secret' });
    const attacker = await records.put('model-provider.api-key', { apiKey: 'attacker-secret' });
    await db.query(
      `UPDATE sealed_records t SET key_id = s.key_id, data = s.data FROM sealed_records s WHERE s.id = $1 AND t.id = $2`,
      [victim, attacker],
    );
    const moved = await rowOf(attacker);
    expect(moved.data.equals((await rowOf(victim)).data)).toBe(true);
    await expect(records.get(attacker)).rejects.toBeInstanceOf(SealedRecordUnreadable);
    // The original stays readable.
    expect((await records.get(victim))?.value).toEqual({ apiKey: 'victim-secret' });
  });

  it('[SEC-01] a row naming an unknown key fails with SealedRecordUnreadable', async () => {
    const id = await records.put('test.key', { apiKey: SECRET });
    await db.query(`UPDATE sealed_records SET key_id = 'k404' WHERE id = $1`, [id]);
    await expect(records.get(id)).rejects.toThrow(/unknown key ID "k404"/);
  });

  it('[SEC-01] after rotation, rows sealed under k1 read through k2 with k1 retired-but-listed, and not without it', async () => {
    const id = await records.put('test.rotation', { apiKey: SECRET });
    const rotated = new SealedRecords(new Sealer(new Keyring(k2, [k1])), database);
    expect((await rotated.get(id))?.value).toEqual({ apiKey: SECRET });
    const fresh = await rotated.put('test.rotation', { apiKey: 'new' });
    expect((await rowOf(fresh)).key_id).toBe('k2');
    const k1Dropped = new SealedRecords(new Sealer(new Keyring(k2)), database);
    await expect(k1Dropped.get(id)).rejects.toBeInstanceOf(SealedRecordUnreadable);
    expect((await k1Dropped.get(fresh))?.value).toEqual({ apiKey: 'new' });
  });
});
