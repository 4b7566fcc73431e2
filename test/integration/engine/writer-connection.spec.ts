import { isConnectionFailure } from '@openbot/domain';
import type { PoolClient } from 'pg';
import { WriterConnection } from '../../../libs/engine/src/base/writer-connection';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';
import { deferred, eventually, onePhase, SERVICE } from './helpers';

const backendPid = async (connection: WriterConnection): Promise<number> => (await connection.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

/** The event writes' own connection (decision 053). */
describe('the writer connection', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('connects at its first statement, and again after its backend was terminated', async () => {
    const connection = new WriterConnection(db.url, 'openbot events probe-a');
    try {
      const first = await backendPid(connection);
      await db.query('SELECT pg_terminate_backend($1)', [first]);
      // The statement that meets the dead connection fails as a connection failure (the caller
      // retries those); the one after it runs on a new connection.
      let second: number | null = null;
      await eventually(async () => {
        try {
          second = await backendPid(connection);
          return true;
        } catch (error) {
          if (!isConnectionFailure(error)) throw error;
          return false;
        }
      }, 'a statement on a new connection');
      expect(second).not.toBeNull();
      expect(second).not.toBe(first);
    } finally {
      await connection.close();
    }
  });

  it('is gone from the database once closed, and refuses statements after', async () => {
    const connection = new WriterConnection(db.url, 'openbot events probe-b');
    await backendPid(connection);
    await connection.close();
    await eventually(async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'openbot events probe-b'`))[0]!.n === 0, 'the connection to close');
    await expect(connection.query('SELECT 1')).rejects.toThrow('closed');
  });
});

let proceed = deferred();

/** Publishes its first token once the test has taken every pooled connection. */
const firstToken = onePhase('test.writer-first-token', 'stream', async (ctx) => {
  await proceed.promise;
  ctx.publisher.publishText('text.delta', 'first', { step: 1, attempt: 1 });
  await ctx.publisher.flush();
});

describe('event writes on a node whose pool is exhausted', () => {
  let t: TestEngine;

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(firstToken);
    await t.engine.start();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('store a first token while every pooled connection is held', async () => {
    proceed = deferred();
    const { executionId } = await t.engine.submit({ workflow: firstToken.name, input: null, scope: SERVICE });
    await eventually(async () => (await t.engine.get(executionId))?.state === 'running', 'the phase to run');
    const held: PoolClient[] = [];
    try {
      while (held.length < t.pool.options.max) held.push(await t.pool.connect());
      proceed.resolve();
      // Read on a connection of the test's own: the engine's pool has none left to give.
      const stored = await eventually(
        async () => (await t.database.query<{ type: string }>(`SELECT type FROM execution_events WHERE execution_id = $1 AND type = 'text.delta'`, [executionId]))[0],
        'the first token stored',
        15_000,
      );
      expect(stored.type).toBe('text.delta');
    } finally {
      for (const client of held) client.release();
    }
  });
});
