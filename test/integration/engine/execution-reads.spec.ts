import { executionReads, type Json, type Workflow } from '@openbot/engine';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { waitForState } from './helpers';

interface Parent {
  [key: string]: Json;
  started: boolean;
}

/** Starts two attached children, waits for them, then ends. */
const parent: Workflow<Parent, null> = {
  name: 'reads.parent',
  initial: () => ({ started: false }),
  next: (s, wake) => (s.started && wake?.children.length ? { end: 'completed' } : { phase: 'fork' }),
  phases: {
    fork: {
      run(ctx) {
        if (ctx.state.started) return Promise.resolve({ state: ctx.state, wait: { children: true } });
        ctx.startChild({ workflow: 'reads.leaf', input: null, resource: { type: 'leaf', id: 'a' } });
        ctx.startChild({ workflow: 'reads.leaf', input: null, resource: { type: 'leaf', id: 'b' } });
        return Promise.resolve({ state: { started: true }, wait: { children: true } });
      },
    },
  },
};

const leaf: Workflow<{ [key: string]: Json }, null> = {
  name: 'reads.leaf',
  initial: () => ({}),
  next: () => ({ end: 'completed' }),
  phases: {},
};

const ORG = '00000000-0000-7000-8000-00000000c0de';
const OTHER_ORG = '00000000-0000-7000-8000-00000000beef';
const MEMBER = { kind: 'member', id: '00000000-0000-7000-8000-0000000000b1', organizationId: ORG } as const;

/** The engine's read API for features (issue 12): what they may know of an execution, without naming its table. */
describe('executionReads', () => {
  let t: TestEngine;

  beforeAll(async () => {
    t = await startTestEngine();
    t.engine.register(parent);
    t.engine.register(leaf);
    await t.engine.start();
    await t.database.query(`INSERT INTO organizations (id, name) VALUES ($1, 'reads'), ($2, 'other')`, [ORG, OTHER_ORG]);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers state, generation, kind, scope and resource, and the children an execution started', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'reads.parent', input: null, scope: MEMBER, resource: { type: 'task', id: 't1' } });
    await waitForState(t.engine, executionId, ['completed']);

    const facts = await executionReads.byId(t.pool, executionId);
    expect(facts).toEqual({
      id: executionId,
      kind: 'reads.parent',
      state: 'completed',
      generation: expect.any(Number) as number,
      organizationId: ORG,
      scope: { kind: 'member', id: MEMBER.id },
      resource: { type: 'task', id: 't1' },
      parentId: null,
      attached: false,
      paused: false,
      errorId: null,
      category: null,
    });
    expect(facts!.generation).toBeGreaterThanOrEqual(1);

    const children = await executionReads.children(t.pool, executionId);
    expect(children.map((c) => [c.kind, c.state, c.parentId, c.resource?.id, c.attached])).toEqual([
      ['reads.leaf', 'completed', executionId, 'a', true],
      ['reads.leaf', 'completed', executionId, 'b', true],
    ]);
  });

  it('scoped to an organization, another organization\'s execution reads as unknown', async () => {
    const { executionId } = await t.engine.submit({ workflow: 'reads.leaf', input: null, scope: MEMBER });
    await waitForState(t.engine, executionId, ['completed']);
    expect((await executionReads.byId(t.pool, executionId, { organizationId: ORG }))?.id).toBe(executionId);
    expect(await executionReads.byId(t.pool, executionId, { organizationId: OTHER_ORG })).toBeNull();
    expect(await executionReads.byId(t.pool, '00000000-0000-7000-8000-000000000000')).toBeNull();
  });
});
