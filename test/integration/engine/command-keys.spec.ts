import { Conflict } from '@openbot/domain';
import type { Json, SubmitCommand, Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { MEMBER, SERVICE } from './helpers';

const echo: Workflow<Json, Json> = {
  name: 'test.echo',
  initial: (input) => input,
  next: (state) => ({ end: 'completed', result: state }),
  phases: {},
};

describe('engine: command keys', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(echo);
    await t.engine.start();
  });
  afterAll(async () => {
    await t.close();
  });

  const submit = (key: string, input: Json, extra: Partial<SubmitCommand> = {}) =>
    t.engine.submit({ workflow: 'test.echo', input, scope: SERVICE, commandKey: key, ...extra });

  const executionsWithKey = async (key: string): Promise<number> => {
    const [row] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_commands WHERE command_key = $1', [key]);
    return row!.n;
  };

  it('[EXE-02] a retry with the same key and input (key order ignored) answers the same execution, not a new one', async () => {
    const first = await submit('order-1', { a: 1, b: { x: [1, 2], y: 'z' } });
    expect(first.created).toBe(true);
    const again = await submit('order-1', { b: { y: 'z', x: [1, 2] }, a: 1 });
    expect(again).toEqual({ executionId: first.executionId, created: false });
    expect(await t.engine.waitForEnd(first.executionId)).toBe('completed');
    // After the end, the key still answers the same execution (and starts nothing).
    const late = await submit('order-1', { a: 1, b: { x: [1, 2], y: 'z' } });
    expect(late).toEqual({ executionId: first.executionId, created: false });
    const [{ n }] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions WHERE id = $1', [first.executionId]);
    expect(n).toBe(1);
    expect(await executionsWithKey('order-1')).toBe(1);
  });

  it('[EXE-02] the same key with a changed input fails as a CommandKeyConflict and creates nothing', async () => {
    const first = await submit('order-2', { amount: 10 });
    const before = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions');
    for (const changed of [{ amount: 11 }, { amount: 10, extra: true }, [10], null, 'amount=10']) {
      const failure = await submit('order-2', changed as Json).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Conflict);
      expect(failure).toMatchObject({ kind: 'conflict', type: 'CommandKeyConflict' });
    }
    // An array order is part of the input (only object key order is ignored).
    const reordered = await submit('order-3', { list: [1, 2] });
    await expect(submit('order-3', { list: [2, 1] })).rejects.toMatchObject({ type: 'CommandKeyConflict' });
    const after = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions');
    expect(after[0]!.n).toBe(before[0]!.n + 1);
    expect((await submit('order-2', { amount: 10 })).executionId).toBe(first.executionId);
    expect(reordered.created).toBe(true);
  });

  it('[EXE-02] five concurrent submits with the same key and input create exactly one execution', async () => {
    const input = { concurrent: true, n: 5 };
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => submit('order-concurrent', input)));
    const ids = new Set(outcomes.map((o) => o.executionId));
    expect(ids.size).toBe(1);
    expect(outcomes.filter((o) => o.created)).toHaveLength(1);
    const [id] = [...ids];
    const rows = await t.database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM executions e JOIN execution_commands c ON c.execution_id = e.id WHERE c.command_key = 'order-concurrent'`,
    );
    expect(rows[0]!.n).toBe(1);
    expect(await t.engine.waitForEnd(id!)).toBe('completed');
    expect(await t.engine.result(id!)).toEqual(input);
  });

  it('[EXE-02] concurrent submits with the same key and different inputs: one wins, every other one is a conflict', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => submit('order-race', { i })));
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(4);
    for (const failure of lost) expect(failure.reason).toMatchObject({ type: 'CommandKeyConflict' });
    expect(await executionsWithKey('order-race')).toBe(1);
  });

  it('[IDN-11] the same key under another scope is another command: member vs service, another scope ID, another target', async () => {
    const input = { same: 'input' };
    const service = await submit('shared-key', input);
    const member = await submit('shared-key', input, { scope: MEMBER });
    const otherService = await submit('shared-key', input, { scope: { ...SERVICE, id: '00000000-0000-7000-8000-0000000000a2' } });
    const otherMember = await submit('shared-key', input, { scope: { ...MEMBER, id: '00000000-0000-7000-8000-0000000000b2' } });
    const otherTarget = await submit('shared-key', input, { target: 'chat:00000000-0000-7000-8000-0000000000c1' });
    const all = [service, member, otherService, otherMember, otherTarget];
    expect(all.every((o) => o.created)).toBe(true);
    expect(new Set(all.map((o) => o.executionId)).size).toBe(5);
    // A member scope and a service scope with the same ID are still different callers.
    const sameIdAsService = await submit('shared-key', input, { scope: { kind: 'member', id: SERVICE.id, organizationId: null } });
    expect(sameIdAsService.created).toBe(true);
    expect(all.map((o) => o.executionId)).not.toContain(sameIdAsService.executionId);
    // Each scope's retry answers its own execution; another input conflicts only within its own scope.
    expect(await submit('shared-key', input, { scope: MEMBER })).toEqual({ executionId: member.executionId, created: false });
    expect(await submit('shared-key', input)).toEqual({ executionId: service.executionId, created: false });
    await expect(submit('shared-key', { other: 1 }, { scope: MEMBER })).rejects.toMatchObject({ type: 'CommandKeyConflict' });
    // Each execution keeps the scope it was submitted under.
    expect((await t.engine.get(member.executionId))?.scope).toEqual({ kind: 'member', id: MEMBER.id });
    expect((await t.engine.get(service.executionId))?.scope).toEqual({ kind: 'service', id: SERVICE.id });
  });

  it('[EXE-02] a submit without a command key always creates a new execution', async () => {
    const a = await t.engine.submit({ workflow: 'test.echo', input: { k: 1 }, scope: SERVICE });
    const b = await t.engine.submit({ workflow: 'test.echo', input: { k: 1 }, scope: SERVICE });
    expect(a.created && b.created).toBe(true);
    expect(a.executionId).not.toBe(b.executionId);
  });
});
