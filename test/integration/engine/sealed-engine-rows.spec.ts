import type { Json, Workflow } from '@openbot/engine';
import { associatedData } from '@openbot/platform';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, SERVICE } from './helpers';

/**
 * EXE-09 and SEC-01 read from the tables themselves: an execution's input, its outside result,
 * its events, a signal's payload, its identity, its result and its full failure are each a
 * distinctive string; no engine table and no queue job holds any of them in the clear, while the
 * engine hands them back whole (they are sealed, not dropped), and a failure leaves only its
 * error ID and category on the execution.
 */

const INPUT = 'input-7f3a-only-sealed';
const OUTSIDE = 'outside-result-91c2-only-sealed';
const EVENT = 'event-text-4b8d-only-sealed';
const SIGNAL = 'signal-payload-c05e-only-sealed';
const IDENTITY = 'identity-actor-2d6b-only-sealed';
const RESULT = 'final-result-e81f-only-sealed';
const FAILURE = 'phase-failure-5a09-only-sealed';
const CALL_FAILURE = 'call-failure-b3d4-only-sealed';
const SECRETS = [INPUT, OUTSIDE, EVENT, SIGNAL, IDENTITY, RESULT, FAILURE, CALL_FAILURE];

interface State {
  [key: string]: Json;
  input: string;
  fail: boolean;
  stage: number;
  outside: string | null;
  signal: string | null;
}

const sealing: Workflow<State, { text: string; fail: boolean }> = {
  name: 'test.sealing',
  initial: ({ text, fail }) => ({ input: text, fail, stage: 0, outside: null, signal: null }),
  next: (s) => (s.stage === 0 ? { phase: 'call' } : s.stage === 1 ? { phase: 'finish' } : { end: 'completed', result: { text: RESULT, input: s.input, outside: s.outside, signal: s.signal } }),
  phases: {
    call: {
      async run(ctx) {
        const answer = await ctx.calls.call('lookup', { safe: true, attempts: 1 }, () => Promise.resolve({ text: OUTSIDE }));
        // An outside call that fails: the call log keeps its error ID; the phase goes on.
        const failed = await ctx.calls
          .call('broken', { safe: true, attempts: 1 }, () => Promise.reject(new Error(CALL_FAILURE)))
          .then(() => false)
          .catch(() => true);
        ctx.emit('test.said', { text: EVENT, failedCall: failed });
        return { state: { ...ctx.state, stage: 1, outside: answer.text }, wait: { signals: ['go'] } };
      },
    },
    finish: {
      async run(ctx) {
        const payload = ctx.wake?.signals[0]?.payload as { text: string } | undefined;
        if (ctx.state.fail) throw new Error(`${FAILURE} after ${payload?.text ?? ''}`);
        return Promise.resolve({ state: { ...ctx.state, stage: 2, signal: payload?.text ?? null } });
      },
    },
  },
};

/** Every row of every engine table and of pg-boss's job table, as text, bytea as hex. */
async function engineRows(t: TestEngine): Promise<Array<{ table: string; row: string }>> {
  const tables = await t.database.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND ((table_schema = 'public' AND (table_name LIKE 'execution%' OR table_name IN ('error_records', 'sealed_records'))) OR table_schema = 'pgboss')
      ORDER BY 1`,
  );
  const rows: Array<{ table: string; row: string }> = [];
  for (const { name } of tables) {
    for (const r of await t.database.query<{ row: string }>(`SELECT row_to_json(x)::text AS row FROM ${name} x`)) rows.push({ table: name, row: r.row });
  }
  return rows;
}

/** The rows that hold a secret in the clear (or as the hex of its bytes), by secret. */
function leaks(rows: ReadonlyArray<{ table: string; row: string }>): Array<{ secret: string; table: string }> {
  return SECRETS.flatMap((secret) => {
    const hex = Buffer.from(secret, 'utf8').toString('hex');
    return rows.filter((r) => r.row.includes(secret) || r.row.toLowerCase().includes(hex)).map((r) => ({ secret, table: r.table }));
  });
}

describe('engine rows are sealed', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(sealing as unknown as Workflow);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[EXE-09] [SEC-01] input, outside result, events, signal, identity and result live only sealed: no engine table or queue job holds their text, and the engine reads them back whole', async () => {
    const { executionId } = await t.engine.submit({ workflow: sealing.name, input: { text: INPUT, fail: false }, scope: SERVICE, identity: { actor: IDENTITY } });
    await eventually(async () => (await t.engine.get(executionId))?.state === 'waiting', 'waiting for its signal');
    // While it waits, as well as at its end.
    expect(leaks(await engineRows(t))).toEqual([]);
    expect(await t.engine.signal(executionId, 'go', { text: SIGNAL })).toBe(true);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const rows = await engineRows(t);
    expect(leaks(rows)).toEqual([]);
    // The scan saw the execution's own rows: the row, its calls, its events, its signal, its jobs.
    const tables = new Set(rows.filter((r) => r.row.includes(executionId)).map((r) => r.table));
    expect([...tables]).toEqual(expect.arrayContaining(['public.executions', 'public.execution_calls', 'public.execution_events', 'public.execution_signals', 'pgboss.job']));
    // SEC-01: every queue job carries only the execution's ID.
    const jobs = await t.database.query<{ data: unknown }>(`SELECT data FROM pgboss.job WHERE data->>'executionId' = $1 OR data::text LIKE $2`, [executionId, `%${executionId}%`]);
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(job.data).toEqual({ executionId });
    // Sealed, not dropped: the engine opens each of them again.
    expect(await t.engine.result(executionId)).toEqual({ text: RESULT, input: INPUT, outside: OUTSIDE, signal: SIGNAL });
    expect(await t.engine.identity(executionId)).toEqual({ actor: IDENTITY });
    const said: Array<{ text: Json | undefined; failedCall: Json | undefined }> = [];
    for await (const event of t.engine.observe(executionId, 0, undefined, false)) if (event.type === 'test.said') said.push({ text: event.text, failedCall: event.failedCall });
    expect(said).toEqual([{ text: EVENT, failedCall: true }]);
    const failedCall = await t.database.query<{ error_id: string | null; result: Buffer | null; cause_id: string; key_id: string; data: Buffer }>(
      `SELECT c.error_id, c.result, s.id AS cause_id, s.key_id, s.data FROM execution_calls c
         JOIN error_records e ON e.id = c.error_id JOIN sealed_records s ON s.id = e.cause_id
        WHERE c.execution_id = $1 AND c.call_key LIKE '%:broken'`,
      [executionId],
    );
    expect(failedCall).toHaveLength(1);
    expect(t.sealer.open({ keyId: failedCall[0]!.key_id, data: failedCall[0]!.data }, associatedData(failedCall[0]!.cause_id, 'error.cause')).toString('utf8')).toContain(CALL_FAILURE);
  });

  it('[EXE-09] a failed phase leaves only its error ID and category on the execution; the full failure opens from its sealed error record', async () => {
    const { executionId } = await t.engine.submit({ workflow: sealing.name, input: { text: INPUT, fail: true }, scope: SERVICE, commandKey: 'failing' });
    await eventually(async () => (await t.engine.get(executionId))?.state === 'waiting', 'waiting for its signal');
    await t.engine.signal(executionId, 'go', { text: SIGNAL });
    expect(await t.engine.waitForEnd(executionId)).toBe('failed');
    expect(leaks(await engineRows(t))).toEqual([]);
    const [row] = await t.database.query<{ error_id: string | null; category: string | null }>('SELECT error_id, category FROM executions WHERE id = $1', [executionId]);
    expect(row).toEqual({ error_id: expect.any(String), category: 'internal' });
    expect(await t.engine.get(executionId)).toMatchObject({ state: 'failed', errorId: row!.error_id, category: 'internal' });
    const [cause] = await t.database.query<{ id: string; key_id: string; data: Buffer; execution_id: string }>(
      `SELECT s.id, s.key_id, s.data, e.execution_id FROM error_records e JOIN sealed_records s ON s.id = e.cause_id WHERE e.id = $1`,
      [row!.error_id],
    );
    expect(cause!.execution_id).toBe(executionId);
    expect(t.sealer.open({ keyId: cause!.key_id, data: cause!.data }, associatedData(cause!.id, 'error.cause')).toString('utf8')).toContain(`${FAILURE} after ${SIGNAL}`);
  });
});
