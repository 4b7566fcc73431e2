import { SIGNALS_CHANNEL } from '../../../libs/engine/src/logs/node-listener';
import { type Json, type Transaction, type Workflow } from '@openbot/engine';
import { withTransaction } from '@openbot/engine/node';
import { Client } from 'pg';
import { Database } from '../../../libs/platform/src/database/sql';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, onePhase, SERVICE, waitForState, type Deferred } from './helpers';

/**
 * `engine.in(tx)` (docs/decisions/077-transaction-scoped-engine-handle.md): the transaction does
 * what must follow its COMMIT. The lease is ten minutes here, so a submitted run's recovery job is
 * due in twenty: a run that ends now was started by its transaction's commit, on this node.
 */
describe('the engine inside a caller transaction', () => {
  let t: TestEngine;
  let listener: Client;
  const notified: string[] = [];
  const heard = new Map<string, Deferred>();
  const holds = new Map<string, Deferred>();

  const quick: Workflow<{ [key: string]: Json; done: boolean }, null> = {
    name: 'test.in-tx.quick',
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed' } : { phase: 'work' }),
    phases: { work: { run: async ({ state }) => ({ state: { ...state, done: true } }) } },
  };
  // Runs until the test lets it go: a running execution, whose signals are announced with NOTIFY.
  const held = onePhase('test.in-tx.held', 'hold', async ({ executionId }) => {
    await holds.get(executionId)!.promise;
  });

  beforeAll(async () => {
    t = await startTestEngine({ leaseSeconds: 600 });
    t.engine.register(quick);
    t.engine.register(held);
    await t.engine.start();
    listener = new Client({ connectionString: t.database.url });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel !== SIGNALS_CHANNEL) return;
      const payload = message.payload ?? '';
      notified.push(payload);
      for (const [id, waiter] of heard) if (payload.includes(id)) waiter.resolve();
    });
    await listener.query(`LISTEN ${SIGNALS_CHANNEL}`);
  });
  afterAll(async () => {
    for (const hold of holds.values()) hold.resolve();
    await listener.end();
    await t.close();
  });

  async function recoveryJobState(executionId: string): Promise<string[]> {
    const rows = await t.database.query<{ state: string }>(`SELECT state::text AS state FROM pgboss.job WHERE name = 'execution-advance' AND data->>'executionId' = $1`, [executionId]);
    return rows.map((row) => row.state);
  }

  async function running(): Promise<string> {
    const { executionId } = await t.engine.submit({ workflow: held.name, input: null, scope: SERVICE });
    holds.set(executionId, deferred());
    await waitForState(t.engine, executionId, ['running']);
    return executionId;
  }

  type InTransaction = (work: (tx: Transaction) => Promise<string>) => Promise<string>;
  it.each<[string, () => InTransaction]>([
    ['withTransaction', () => (work) => withTransaction(t.pool, work)],
    ['the Database helper handlers use', () => (work) => new Database(t.pool).transaction(work)],
  ])('[EXE-08] a run submitted in a transaction (%s) starts on this node once it commits, without its recovery job', async (_label, transaction) => {
    const executionId = await transaction()((tx) => t.engine.in(tx).submit({ workflow: quick.name, input: null, scope: SERVICE }));
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const [row] = await t.database.query<{ generation: number }>('SELECT generation FROM executions WHERE id = $1', [executionId]);
    // Run by its first generation, here: nobody claimed it through the queue.
    expect(row!.generation).toBe(1);
    // Its recovery job was written with it and is still waiting, never fetched.
    expect(await recoveryJobState(executionId)).toEqual(['created']);
  });

  it('[EXE-08] a transaction that rolls back starts nothing and announces nothing: no execution row, no signal, no NOTIFY', async () => {
    const signalled = await running();
    const marker = await running();
    heard.set(marker, deferred());
    let submitted = '';
    await expect(
      withTransaction(t.pool, async (tx) => {
        submitted = await t.engine.in(tx).submit({ workflow: quick.name, input: null, scope: SERVICE });
        expect(await t.engine.in(tx).signal(signalled, 'poke')).toBe(true);
        expect(await t.engine.in(tx).pause(signalled)).toEqual({ state: 'running', paused: true });
        throw new Error('the feature refused after the engine work');
      }),
    ).rejects.toThrow('the feature refused after the engine work');
    expect(submitted).not.toBe('');

    // A committed signal to another running execution: its NOTIFY comes after anything the rolled-back one would have sent.
    expect(await withTransaction(t.pool, (tx) => t.engine.in(tx).signal(marker, 'poke'))).toBe(true);
    await heard.get(marker)!.promise;
    expect(notified.filter((payload) => payload.includes(signalled))).toEqual([]);

    expect(await t.database.query('SELECT id FROM executions WHERE id = $1', [submitted])).toEqual([]);
    expect(await recoveryJobState(submitted)).toEqual([]);
    expect(await t.database.query('SELECT id FROM execution_signals WHERE execution_id = $1', [signalled])).toEqual([]);
    expect(await t.engine.get(signalled)).toMatchObject({ state: 'running', paused: false });

    for (const id of [signalled, marker]) holds.get(id)!.resolve();
    expect(await t.engine.waitForEnd(signalled)).toBe('completed');
    expect(await t.engine.waitForEnd(marker)).toBe('completed');
  });
});
