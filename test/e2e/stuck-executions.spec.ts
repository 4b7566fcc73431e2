import { newId } from '@openbot/domain';
import { Engine, type Json, type Workflow } from '@openbot/engine';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expectDeclaredNoErrorId, issuePaths } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The operator's stuck-work view (`/v1/platform/executions/stuck`) and its two actions, on the
 * real app: an execution is left in outcome_unknown by a fault point (a lost result of an
 * unsafe write), the view lists it with its owner and lease, and a decision or a cancel through
 * the platform routes settles it and is recorded in the organization's audit log.
 */

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

interface Tagged {
  [key: string]: Json;
  tag: string;
}

/** One unsafe outside write; a lost result leaves it in outcome_unknown (CALL-03). */
const write: Workflow<Tagged & { receipt: Json }, Tagged> = {
  name: 'e2e.stuck.write',
  initial: ({ tag }) => ({ tag, receipt: null }),
  next: (s) => (s.receipt !== null ? { end: 'completed', result: { receipt: s.receipt } } : { phase: 'write' }),
  phases: {
    write: {
      retries: 1,
      async run({ state, calls }) {
        const receipt = await calls.call(`write-${state.tag}`, { safe: false }, async () => ({ by: 'outside' }));
        return { state: { ...state, receipt } };
      },
    },
  },
};

/** Waits for a signal that never comes. */
const parked: Workflow<Tagged & { waited: boolean }, Tagged> = {
  name: 'e2e.stuck.parked',
  initial: ({ tag }) => ({ tag, waited: false }),
  next: (s) => (s.waited ? { end: 'completed', result: null } : { phase: 'park' }),
  phases: {
    park: {
      async run({ state }) {
        return { state: { ...state, waited: true }, wait: { signals: ['never'] } };
      },
    },
  },
};

interface StuckRow {
  id: string;
  kind: string;
  state: string;
  organizationId: string | null;
  ownerNode: string | null;
  leaseUntil: string | null;
  leased: boolean;
  since: string;
  ageSeconds: number;
  generation: number;
}

describe('the stuck-work view for operators', () => {
  let t: TestApp;
  let engine: Engine;
  let acme: Org;
  const admin = (): string => `Bearer ${t.adminToken}`;

  beforeAll(async () => {
    t = await startTestApp();
    engine = t.app.get(Engine);
    for (const workflow of [write, parked]) engine.register(workflow as unknown as Workflow);
    acme = await t.createOrganization('Acme');
  });
  afterAll(async () => {
    engine.faults.disarm();
    await t?.close();
  });

  async function submit(workflow: string, tag: string): Promise<string> {
    const { executionId } = await engine.submit({
      workflow,
      input: { tag },
      scope: { kind: 'member', id: acme.memberId, organizationId: acme.organizationId },
      resource: { type: 'turn', id: newId() },
    });
    return executionId;
  }

  async function until(id: string, type: string): Promise<void> {
    for await (const event of engine.observe(id, 0)) if (event.type === type) return;
    throw new Error(`execution ${id} ended without a ${type} event`);
  }

  /** Polls the engine's view until the execution waits (no event marks a wait). */
  async function waitingState(id: string): Promise<void> {
    for (let i = 0; i < 2_000; i++) {
      if ((await engine.get(id))?.state === 'waiting') return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`execution ${id} never waited`);
  }

  async function lostWrite(): Promise<string> {
    const tag = randomBytes(6).toString('hex');
    engine.faults.arm('call.result.before-commit', { kind: 'throw' }, { when: (c) => c.callKey?.endsWith(`write-${tag}`) === true });
    const id = await submit(write.name, tag);
    await until(id, 'execution.outcome_unknown');
    return id;
  }

  const stuck = (query: string) => t.http().get(`/v1/platform/executions/stuck${query}`).set('authorization', admin());
  const audit = (id: string) =>
    t.database.query<{ action: string; actor_kind: string; details: Record<string, unknown> }>(
      `SELECT action, actor_kind, details FROM audit_events WHERE organization_id = $1 AND target_type = 'execution' AND target_id = $2 ORDER BY id`,
      [acme.organizationId, id],
    );

  it('lists an execution left in outcome_unknown by a fault point, with its owner and lease, only past the threshold and for the states asked', async () => {
    const id = await lostWrite();
    const listed = await stuck('?olderThan=0&state=outcome_unknown').expect(200);
    const row = (listed.body as { data: StuckRow[] }).data.find((r) => r.id === id);
    expect(row).toMatchObject({ kind: write.name, state: 'outcome_unknown', organizationId: acme.organizationId, ownerNode: expect.any(String), leased: false, generation: 1 });
    expect(Date.parse(row!.since)).toBeLessThanOrEqual(Date.now());
    // Younger than an hour, and not in the states asked for: not listed.
    expect((await stuck('?olderThan=3600').expect(200)).body.data.map((r: StuckRow) => r.id)).not.toContain(id);
    expect((await stuck('?olderThan=0&state=waiting,cancelling').expect(200)).body.data.map((r: StuckRow) => r.id)).not.toContain(id);
  });

  it('`openbot admin stuck` lists it, and `openbot admin decide` settles it, with the platform token from the environment', async () => {
    const id = await lostWrite();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const clean: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(clean)) if (name.startsWith('OPENBOT_')) delete clean[name];
    const cli = (args: string[]) =>
      promisify(execFile)(process.execPath, [join(__dirname, '..', '..', 'dist', 'apps', 'cli', 'src', 'main.js'), ...args], {
        env: { ...clean, OPENBOT_URL: url, OPENBOT_ADMIN_TOKEN: t.adminToken, OPENBOT_CONFIG: join(__dirname, 'no-such-config.json') },
        timeout: 30_000,
      });
    const table = await cli(['admin', 'stuck', '--older-than', '0', '--state', 'outcome_unknown']);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+outcome_unknown\\s+${write.name.replace('.', '\\.')}`));
    const listed = JSON.parse((await cli(['admin', 'stuck', '--older-than', '0', '--json'])).stdout) as { data: StuckRow[] };
    expect(listed.data.some((r) => r.id === id && r.state === 'outcome_unknown')).toBe(true);
    const decided = JSON.parse((await cli(['admin', 'decide', id, 'failed', '--json'])).stdout) as { id: string };
    expect(decided.id).toBe(id);
    await until(id, 'execution.ended');
    expect((await engine.get(id))?.state).toBe('failed');
    await expect(cli(['admin', 'decide', id, 'maybe'])).rejects.toMatchObject({ code: 1 }); // usage
    await expect(cli(['admin', 'decide', id, 'stop'])).rejects.toMatchObject({ code: 2 }); // refused: it is no longer in outcome_unknown
  });

  it('pages oldest first; bad input names its field; only the platform token may look', async () => {
    // The list orders by when each reached its state: each is submitted only once the one before waits,
    // so their order is known (submitted together, a busy machine may park them in another order).
    const ids: string[] = [];
    for (const input of ['a', 'b', 'c']) {
      const id = await submit(parked.name, input);
      await waitingState(id);
      ids.push(id);
    }
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const res = await stuck(`?olderThan=0&state=waiting&limit=1${next === null ? '' : `&after=${next}`}`).expect(200);
      const body = res.body as { data: StuckRow[]; next: string | null };
      expect(body.data.length).toBeLessThanOrEqual(1);
      seen.push(...body.data.map((r) => r.id));
      next = body.next;
    } while (next !== null);
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);

    const badAge = await stuck('?olderThan=soon');
    expectDeclaredNoErrorId(badAge, 400, 'InvalidInput');
    expect(issuePaths(badAge)).toEqual(['olderThan']);
    const badState = await stuck('?state=running');
    expectDeclaredNoErrorId(badState, 400, 'InvalidInput');
    expect(issuePaths(badState)).toEqual(['state']);
    expectDeclaredNoErrorId(await t.http().get('/v1/platform/executions/stuck').set('authorization', `Bearer ${acme.secret}`), 403, 'Forbidden');
    expectDeclaredNoErrorId(await t.http().get('/v1/platform/executions/stuck'), 401, 'Unauthenticated');
  });

  it("settles work through the member routes' commands: a decision completes the lost write and a cancel ends the parked one, each recorded in the organization's audit log", async () => {
    const unknown = await lostWrite();
    const decided = await t.http().post(`/v1/platform/executions/${unknown}/decision`).set('authorization', admin()).send({ decision: 'succeeded', result: { by: 'operator' } }).expect(202);
    expect(decided.body).toMatchObject({ id: unknown });
    await until(unknown, 'execution.ended');
    expect((await engine.get(unknown))?.state).toBe('completed');
    expect(await audit(unknown)).toEqual([{ action: 'execution.decision-requested', actor_kind: 'platform-admin', details: { state: 'outcome_unknown', kind: write.name, decision: 'succeeded' } }]);

    const waiting = await submit(parked.name, 'd');
    await waitingState(waiting);
    await t.http().post(`/v1/platform/executions/${waiting}/cancel`).set('authorization', admin()).expect(202);
    await until(waiting, 'execution.ended');
    expect((await engine.get(waiting))?.state).toBe('cancelled');
    expect((await audit(waiting)).map((a) => a.action)).toEqual(['execution.cancel-requested']);
    expect((await stuck('?olderThan=0').expect(200)).body.data.map((r: StuckRow) => r.id)).not.toEqual(expect.arrayContaining([unknown, waiting]));

    expectDeclaredNoErrorId(await t.http().post(`/v1/platform/executions/${newId()}/cancel`).set('authorization', admin()), 404, 'ExecutionNotFound');
    expectDeclaredNoErrorId(await t.http().post(`/v1/platform/executions/${waiting}/cancel`).set('authorization', `Bearer ${acme.secret}`), 403, 'Forbidden');
  });
});
