import { codec, defineWorkflow } from '@openbot/engine';
import { associatedData } from '@openbot/platform';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { QUOTE, quoteWorkflow } from './guide-example.workflow';
import { SERVICE, waitForState } from './helpers';

/** The example workflow of docs/engine.md, on a real PostgreSQL. */
describe('engine guide: the quote example', () => {
  let t: TestEngine;
  const asked: string[] = [];
  const prices = {
    priceOf: (customer: string) => {
      asked.push(customer);
      return Promise.resolve(customer.length * 10);
    },
  };

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(quoteWorkflow({ prices }));
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('asks the price once, waits for the typed decision signal, and completes with its typed result', async () => {
    const { executionId } = await t.engine.submit({ ...QUOTE.command({ customer: 'acme', answerWithinMs: 600_000 }), scope: SERVICE });
    await waitForState(t.engine, executionId, ['waiting']);
    expect(await QUOTE.signal(t.engine, executionId, 'decision', { approved: true, by: 'ana' })).toBe(true);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toEqual({ price: 40, decision: 'approved', decidedBy: 'ana' });
    expect(asked).toEqual(['acme']);
  });

  it('without a decision the durable timer wakes it and the quote expires', async () => {
    const { executionId } = await t.engine.submit({ ...QUOTE.command({ customer: 'globex', answerWithinMs: 200 }), scope: SERVICE });
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toEqual({ price: 60, decision: 'expired', decidedBy: null });
  });

  it('refuses an input its codec does not accept at submit: nothing is stored', async () => {
    const before = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions');
    await expect(t.engine.submit({ workflow: QUOTE.name, input: { customer: 7 }, scope: SERVICE })).rejects.toThrow(/input\.customer is not a string/);
    expect(await t.database.query('SELECT count(*)::int AS n FROM executions')).toEqual(before);
  });
});

describe('typed workflows: the phase inbox', () => {
  const STEERED = defineWorkflow({
    name: 'test.steered',
    input: codec.object({}),
    state: codec.object({ heard: codec.nullable(codec.string) }),
    result: codec.object({ heard: codec.string }),
    signals: { steer: codec.object({ text: codec.string }) },
  });
  const steered = STEERED.implement({
    initial: () => ({ heard: null }),
    next: (state) => (state.heard === null ? { phase: 'listen' } : { end: 'completed', result: { heard: state.heard } }),
    phases: {
      listen: {
        async run(context) {
          const [signal] = await context.inbox.next(['steer']);
          return { state: { heard: signal!.payload.text } };
        },
      },
    },
  });

  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(steered);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a running phase reads a declared signal with its payload decoded', async () => {
    const { executionId } = await t.engine.submit({ ...STEERED.command({}), scope: SERVICE });
    await waitForState(t.engine, executionId, ['running']);
    expect(await STEERED.signal(t.engine, executionId, 'steer', { text: 'left' })).toBe(true);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    expect(await t.engine.result(executionId)).toEqual({ heard: 'left' });
  });
});

/**
 * A rolling deploy whose new code reads the stored state differently: the codec checks the
 * stored JSON, and the execution fails with the decode error as its sealed cause (CALL-07)
 * instead of running on a value cast into a type it does not have.
 */
describe('typed workflows: stored JSON is checked when read', () => {
  const v1 = defineWorkflow({
    name: 'test.versioned',
    input: codec.object({}),
    state: codec.object({ count: codec.number }),
    signals: { go: codec.object({ by: codec.string }) },
  }).implement({
    initial: () => ({ count: 0 }),
    next: (state) => (state.count === 0 ? { phase: 'park' } : { end: 'completed' }),
    phases: { park: { run: () => Promise.resolve({ state: { count: 0 }, wait: { signals: ['go'] } }) } },
  });
  const v2 = (ran: string[]) =>
    defineWorkflow({
      name: 'test.versioned',
      input: codec.object({}),
      state: codec.object({ count: codec.number, label: codec.string }),
      signals: { go: codec.object({ by: codec.string }) },
    }).implement({
      initial: () => ({ count: 0, label: '' }),
      next: () => ({ phase: 'work' }),
      phases: {
        work: {
          run: (context) => {
            ran.push(context.state.label);
            return Promise.resolve({ state: { ...context.state, count: 1 } });
          },
        },
      },
      end: (context) => {
        ran.push(`end ${context.state.label}`);
        return Promise.resolve();
      },
    });

  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.close();
  });

  it('[CALL-07] state the new codec does not accept fails the execution with an error record; no phase or end work runs on it', async () => {
    const old = await t.node('node-old');
    old.engine.register(v1);
    await old.engine.start();
    const { executionId } = await old.engine.submit({ workflow: 'test.versioned', input: {}, scope: SERVICE });
    await waitForState(old.engine, executionId, ['waiting']);
    await old.engine.stop(1_000);

    const ran: string[] = [];
    const current = await t.node('node-new');
    current.engine.register(v2(ran));
    await current.engine.start();
    expect(await current.engine.signal(executionId, 'go', { by: 'ops' })).toBe(true);
    expect(await current.engine.waitForEnd(executionId)).toBe('failed');
    const view = await current.engine.get(executionId);
    expect(view).toMatchObject({ state: 'failed', category: 'internal' });
    expect(await causeOf(t, view!.errorId!)).toContain('state.label is not present');
    expect(ran).toEqual([]);
  });
});

async function causeOf(t: TestEngine, errorId: string): Promise<string> {
  const [record] = await t.database.query<{ cause_id: string }>('SELECT cause_id FROM error_records WHERE id = $1', [errorId]);
  const [sealed] = await t.database.query<{ key_id: string; data: Buffer; purpose: string }>('SELECT key_id, data, purpose FROM sealed_records WHERE id = $1', [record!.cause_id]);
  return t.sealer.open({ keyId: sealed!.key_id, data: sealed!.data }, associatedData(record!.cause_id, sealed!.purpose)).toString('utf8');
}
