import { childIdentity, identityForService, newId, parseExecutionIdentity, type ExecutionIdentity } from '@openbot/domain';
import type { Engine, ExecutionEvent, IdentityCheck, IdentityVerdict, Json, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { eventually, executionRow, OutsideService, SERVICE, waitForState } from '../engine/helpers';

/**
 * The engine's identity checks (IDN-01, IDN-02, IDN-06) on a real database, with a check port the
 * test can turn: an identity whose actor is in `revoked` is invalid from that moment on.
 */
class SwitchableCheck implements IdentityCheck {
  readonly revoked = new Set<string>();
  readonly asked: Array<{ executionId: string; actor: string }> = [];

  async check(identity: Json, executionId: string): Promise<IdentityVerdict> {
    const actor = parseExecutionIdentity(identity).actor.id;
    this.asked.push({ executionId, actor });
    return this.revoked.has(actor) ? { invalid: `test revoked ${actor}` } : 'valid';
  }

  derive(parent: Json, sourceExecutionId: string): Json {
    return childIdentity(parseExecutionIdentity(parent), { sourceExecutionId, addPermissionsLimit: ['chats.read'] }) as unknown as Json;
  }

  askedFor(executionId: string): number {
    return this.asked.filter((a) => a.executionId === executionId).length;
  }
}

type Step = 'call' | 'call-then-revoke' | 'call-caught' | 'wait' | 'child' | 'submit-at-end';

/** What `call-then-revoke` revokes with: its own identity, read back from the engine, as soon as its send answered. */
const hooks: { engine: Engine | null; check: SwitchableCheck | null } = { engine: null, check: null };

interface StepsState {
  [key: string]: Json;
  steps: Step[];
  i: number;
  log: string[];
  child: string | null;
}

const outside = new OutsideService(() => 'ok');
const childOutside = new OutsideService(() => 'child-ok');

/** Runs its steps one phase each: an outside call, a caught outside call, a wait for `go`, a child. */
const steps: Workflow<StepsState, { steps: Step[] }> = {
  name: 'test.identity.steps',
  initial: ({ steps: list }) => ({ steps: list, i: 0, log: [], child: null }),
  next: (s) => (s.i < s.steps.length ? { phase: s.steps[s.i]! } : { end: 'completed', result: s.log }),
  phases: {
    call: {
      async run({ state, calls, executionId }) {
        await calls.call(`op${state.i}`, { safe: true }, (request) => outside.send(request, executionId));
        return { state: { ...state, i: state.i + 1, log: [...state.log, `call${state.i}`] } };
      },
    },
    'call-then-revoke': {
      async run({ state, calls, executionId }) {
        await calls.call(`op${state.i}`, { safe: true }, async (request) => {
          const answer = await outside.send(request, executionId);
          const identity = parseExecutionIdentity(await hooks.engine!.identity(executionId));
          hooks.check!.revoked.add(identity.actor.id);
          return answer;
        });
        return { state: { ...state, i: state.i + 1, log: [...state.log, `call${state.i}`] } };
      },
    },
    'call-caught': {
      async run({ state, calls, executionId }) {
        let entry = `call${state.i}`;
        try {
          await calls.call(`op${state.i}`, { safe: true }, (request) => outside.send(request, executionId));
        } catch {
          entry = `caught${state.i}`;
        }
        return { state: { ...state, i: state.i + 1, log: [...state.log, entry] } };
      },
    },
    wait: {
      async run({ state }) {
        return { state: { ...state, i: state.i + 1, log: [...state.log, `wait${state.i}`] }, wait: { signals: ['go'] } };
      },
    },
    child: {
      async run({ state, startChild }) {
        if (state.child !== null) return { state: { ...state, i: state.i + 1, log: [...state.log, 'child-ended'] } };
        const child = startChild({ workflow: 'test.identity.child', input: null });
        return { state: { ...state, child }, wait: { children: true } };
      },
    },
    'submit-at-end': {
      async run({ state }) {
        return { state: { ...state, i: state.i + 1 } };
      },
    },
  },
  async end(context) {
    if (!context.state.steps.includes('submit-at-end') || context.outcome !== 'completed') return;
    await context.submit({ workflow: 'test.identity.child', input: null, scope: SERVICE });
  },
};

/** One outside call, then the end. */
const child: Workflow<{ [key: string]: Json; done: boolean }, null> = {
  name: 'test.identity.child',
  initial: () => ({ done: false }),
  next: (s) => (s.done ? { end: 'completed' } : { phase: 'call' }),
  phases: {
    call: {
      async run({ state, calls, executionId }) {
        await calls.call('op', { safe: true }, (request) => childOutside.send(request, executionId));
        return { state: { ...state, done: true } };
      },
    },
  },
};

async function ended(engine: Engine, id: string): Promise<ExecutionEvent> {
  for await (const event of engine.observe(id)) if (event.type === 'execution.ended') return event;
  throw new Error('no end');
}

describe('engine: execution identity', () => {
  let t: TestEngine;
  const check = new SwitchableCheck();

  beforeAll(async () => {
    t = await startTestEngine({ identityCheck: check });
    hooks.engine = t.engine;
    hooks.check = check;
    t.engine.register(steps);
    t.engine.register(child);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  /** A fresh identity per test: revoking it touches no other test. */
  const fresh = (): ExecutionIdentity => identityForService({ id: newId(), organizationId: null });
  const submit = (list: Step[], identity: ExecutionIdentity | undefined) =>
    t.engine.submit({ workflow: steps.name, input: { steps: list }, scope: SERVICE, ...(identity ? { identity: identity as unknown as Json } : {}) });
  const calls = (executionId: string) =>
    t.database.query<{ call_key: string; status: string }>('SELECT call_key, status FROM execution_calls WHERE execution_id = $1 ORDER BY created_at', [executionId]);

  it('[IDN-01] an execution keeps its identity sealed for its own row: ciphertext in the table, the same identity when opened, unreadable when moved', async () => {
    const identity = fresh();
    const { executionId } = await submit([], identity);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const row = await executionRow(t.database, executionId);
    expect(row.identity_key_id).toBe('test1');
    const bytes = row.identity as Buffer;
    expect(bytes.toString('latin1')).not.toContain(identity.actor.id);
    expect(bytes.toString('latin1')).not.toContain('service');
    expect(await t.engine.identity(executionId)).toEqual(identity);
    // An envelope moved to another execution's row does not open there (SEC-01).
    const other = await submit([], fresh());
    await t.engine.waitForEnd(other.executionId);
    await t.database.query('UPDATE executions SET identity = $2 WHERE id = $1', [other.executionId, bytes]);
    await expect(t.engine.identity(other.executionId)).rejects.toThrow();
    // Submitted without one: nothing stored, nothing to check.
    const none = await submit(['call'], undefined);
    expect(await t.engine.waitForEnd(none.executionId)).toBe('completed');
    expect(await t.engine.identity(none.executionId)).toBeNull();
    expect(check.askedFor(none.executionId)).toBe(0);
  });

  it('[IDN-06] every outside send is checked first; once the identity is invalid the next call is saved failed, never sent, and the execution fails forbidden', async () => {
    const identity = fresh();
    const before = outside.calls;
    // Revoked while its first send is out; the run goes on in the same generation (no restore).
    const { executionId } = await submit(['call-then-revoke', 'call', 'call'], identity);
    const end = await ended(t.engine, executionId);
    expect(end).toMatchObject({ state: 'failed', category: 'forbidden', errorId: expect.any(String) });
    expect(outside.calls).toBe(before + 1);
    expect(check.askedFor(executionId)).toBe(2);
    expect(await calls(executionId)).toEqual([
      { call_key: '1:op0', status: 'succeeded' },
      { call_key: '2:op1', status: 'failed' },
    ]);
    const view = await t.engine.get(executionId);
    expect(view).toMatchObject({ state: 'failed', category: 'forbidden', errorId: end.errorId, generation: 1, step: 1 });
    // The failure has its sealed cause like any other (ERR-01); the reason is not in clear.
    const [record] = await t.database.query<{ category: string; cause_id: string }>('SELECT category, cause_id FROM error_records WHERE id = $1', [end.errorId]);
    expect(record?.category).toBe('forbidden');
    const [sealed] = await t.database.query<{ data: Buffer }>('SELECT data FROM sealed_records WHERE id = $1', [record!.cause_id]);
    expect(sealed!.data.toString('latin1')).not.toContain('test revoked');
  });

  it('[IDN-06] woken work is checked before its next phase: a revoked identity fails at restore, and a valid one goes on', async () => {
    const revoked = fresh();
    const kept = fresh();
    const a = await submit(['wait', 'call'], revoked);
    const b = await submit(['wait', 'call'], kept);
    await waitForState(t.engine, a.executionId, ['waiting']);
    await waitForState(t.engine, b.executionId, ['waiting']);
    check.revoked.add(revoked.actor.id);
    const before = outside.calls;
    await t.engine.signal(a.executionId, 'go');
    await t.engine.signal(b.executionId, 'go');
    expect(await ended(t.engine, a.executionId)).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(await t.engine.waitForEnd(b.executionId)).toBe('completed');
    // The revoked one never reached its call: not even an intent was saved.
    expect(await calls(a.executionId)).toEqual([]);
    expect(await calls(b.executionId)).toEqual([{ call_key: '2:op1', status: 'succeeded' }]);
    expect(outside.calls).toBe(before + 1);
    // b: one check on restore, one before its send.
    expect(check.askedFor(b.executionId)).toBe(2);
    expect((await t.engine.get(a.executionId))?.step).toBe(1);
  });

  it('[IDN-06] a phase that catches the refused send still fails forbidden; nothing of that phase is saved', async () => {
    const identity = fresh();
    const { executionId } = await submit(['wait', 'call-caught', 'call'], identity);
    await waitForState(t.engine, executionId, ['waiting']);
    // Valid at restore, revoked by the time the phase sends.
    const realCheck = check.check.bind(check);
    let restored = false;
    const spy = jest.spyOn(check, 'check').mockImplementation(async (value, id) => {
      if (id === executionId && !restored) {
        restored = true;
        const verdict = await realCheck(value, id);
        check.revoked.add(identity.actor.id);
        return verdict;
      }
      return realCheck(value, id);
    });
    try {
      await t.engine.signal(executionId, 'go');
      expect(await ended(t.engine, executionId)).toMatchObject({ state: 'failed', category: 'forbidden' });
    } finally {
      spy.mockRestore();
    }
    expect(await calls(executionId)).toEqual([{ call_key: '2:op1', status: 'failed' }]);
    expect((await t.engine.get(executionId))?.step).toBe(1);
  });

  it('[IDN-06] a cancel still runs when the identity is invalid: releasing needs no rights', async () => {
    const identity = fresh();
    const { executionId } = await submit(['wait', 'call'], identity);
    await waitForState(t.engine, executionId, ['waiting']);
    check.revoked.add(identity.actor.id);
    expect(await t.engine.cancel(executionId)).toEqual({ state: 'cancelling' });
    expect(await t.engine.waitForEnd(executionId)).toBe('cancelled');
  });

  it('[IDN-02] a child gets its parent identity as the port derives it (limits only narrow), sealed for its own row, and its sends are checked against it', async () => {
    const identity = fresh();
    const { executionId } = await submit(['child'], identity);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const [row] = await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [executionId]);
    const childIdentity = (await t.engine.identity(row!.id)) as unknown as ExecutionIdentity;
    expect(childIdentity).toEqual({ ...identity, sourceExecutionId: executionId, limits: { permissions: ['chats.read'] } });
    expect(check.asked).toContainEqual({ executionId: row!.id, actor: identity.actor.id });

    // A revoked parent identity stops the child too.
    const revoked = fresh();
    const second = await submit(['wait', 'child'], revoked);
    await waitForState(t.engine, second.executionId, ['waiting']);
    const beforeChild = childOutside.calls;
    // Revoked only once the child exists: the parent passed its restore check and started it.
    const realCheck = check.check.bind(check);
    const spy = jest.spyOn(check, 'check').mockImplementation(async (value, id) => {
      if (id !== second.executionId) check.revoked.add(revoked.actor.id);
      return realCheck(value, id);
    });
    try {
      await t.engine.signal(second.executionId, 'go');
      const childRow = await eventually(async () => (await t.database.query<{ id: string }>('SELECT id FROM executions WHERE parent_id = $1', [second.executionId]))[0], 'the child');
      expect(await ended(t.engine, childRow.id)).toMatchObject({ state: 'failed', category: 'forbidden' });
      expect(childOutside.calls).toBe(beforeChild);
    } finally {
      spy.mockRestore();
    }
  });

  it('[IDN-01] work an end submits carries the ending execution identity unless it names its own', async () => {
    const identity = fresh();
    const { executionId } = await submit(['submit-at-end'], identity);
    expect(await t.engine.waitForEnd(executionId)).toBe('completed');
    const [next] = await t.database.query<{ id: string }>(
      `SELECT id FROM executions WHERE workflow = 'test.identity.child' AND parent_id IS NULL AND created_at >= (SELECT created_at FROM executions WHERE id = $1) ORDER BY created_at DESC LIMIT 1`,
      [executionId],
    );
    expect(await t.engine.waitForEnd(next!.id)).toBe('completed');
    expect(await t.engine.identity(next!.id)).toEqual(identity);
  });
});
