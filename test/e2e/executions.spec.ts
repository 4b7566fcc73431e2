import { newId } from '@openbot/domain';
import { Engine, type Json, type Workflow } from '@openbot/engine';
import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { DataSource } from 'typeorm';
import { expectDeclaredNoErrorId, issuePaths, UUID } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The execution routes of docs/http-api.md "Executions and events" (GET, cancel, decision) and their OpenAPI
 * entries: the real app on a fresh database, test workflows registered on the node's engine,
 * executions created with `engine.submit` in an organization's member scope.
 */

/** A private failure text: it must reach the sealed record and nowhere else. */
const SECRET = `secret-phase-failure-${randomBytes(12).toString('hex')}`;

type Org = Awaited<ReturnType<TestApp['createOrganization']>>;

/** Test-side hooks, keyed by a tag in the workflow input (one process: app and test share them). */
const started = new Map<string, () => void>();
const aborted = new Set<string>();
/** How often the outside write of each tag was really sent. */
const sends = new Map<string, number>();

function latch(tag: string): Promise<void> {
  return new Promise((resolve) => started.set(tag, resolve));
}

interface Tagged {
  [key: string]: Json;
  tag: string;
}

/** Completes at once with a result. */
const done: Workflow<Tagged & { ran: boolean }, Tagged> = {
  name: 'e2e.exec.done',
  initial: ({ tag }) => ({ tag, ran: false }),
  next: (s) => (s.ran ? { end: 'completed', result: { tag: s.tag } } : { phase: 'work' }),
  phases: {
    work: {
      async run({ state }) {
        return { state: { ...state, ran: true } };
      },
    },
  },
};

/** Its phase throws a private error: the execution fails with a sealed cause. */
const boom: Workflow<Tagged, Tagged> = {
  name: 'e2e.exec.boom',
  initial: ({ tag }) => ({ tag }),
  next: () => ({ phase: 'work' }),
  phases: {
    work: {
      async run() {
        throw new Error(SECRET);
      },
    },
  },
};

/** Its phase runs until its AbortSignal fires (a cancel closes the phase gate). */
const hold: Workflow<Tagged, Tagged> = {
  name: 'e2e.exec.hold',
  initial: ({ tag }) => ({ tag }),
  next: () => ({ phase: 'wait' }),
  phases: {
    wait: {
      async run({ state, signal }) {
        started.get(state.tag)?.();
        await new Promise<never>((_, reject) => {
          const stop = (): void => {
            aborted.add(state.tag);
            reject(new Error('the phase gate closed'));
          };
          if (signal.aborted) stop();
          else signal.addEventListener('abort', stop, { once: true });
        });
        return { state };
      },
    },
  },
};

/**
 * One unsafe outside write (CALL-03): `retries: 1`, so when the first attempt loses the write's
 * result, the retry finds the unsafe call still `sending` and the execution waits in outcome_unknown.
 */
const write: Workflow<Tagged & { receipt: Json }, Tagged> = {
  name: 'e2e.exec.write',
  initial: ({ tag }) => ({ tag, receipt: null }),
  next: (s) => (s.receipt !== null ? { end: 'completed', result: { receipt: s.receipt } } : { phase: 'write' }),
  phases: {
    write: {
      retries: 1,
      async run({ state, calls, emit }) {
        const receipt = await calls.call(`write-${state.tag}`, { safe: false }, async () => {
          const n = (sends.get(state.tag) ?? 0) + 1;
          sends.set(state.tag, n);
          return { sent: n, by: 'outside' };
        });
        emit('probe.written', { receipt });
        return { state: { ...state, receipt } };
      },
    },
  },
};

describe('Executions API', () => {
  let t: TestApp;
  let engine: Engine;
  let db: DataSource;
  let acme: Org;
  let other: Org;
  const as = (org: Org): string => `Bearer ${org.secret}`;

  async function submit(org: Org, workflow: string, tag = randomBytes(6).toString('hex')): Promise<{ id: string; tag: string; resourceId: string }> {
    const resourceId = newId();
    const { executionId } = await engine.submit({
      workflow,
      input: { tag },
      scope: { kind: 'member', id: org.memberId, organizationId: org.organizationId },
      resource: { type: 'turn', id: resourceId },
    });
    return { id: executionId, tag, resourceId };
  }

  /** Follows the event log until an event of `type` exists (no clock involved). */
  async function eventOf(id: string, type: string): Promise<Record<string, unknown>> {
    for await (const event of engine.observe(id, 0)) if (event.type === type) return event;
    throw new Error(`execution ${id} ended without a ${type} event`);
  }

  async function get(org: Org, id: string): Promise<Response> {
    return t.http().get(`/v1/executions/${id}`).set('authorization', as(org));
  }

  /** An execution whose unsafe write was sent but whose result was lost: it waits in outcome_unknown. */
  async function lostWrite(): Promise<{ id: string; tag: string }> {
    const tag = randomBytes(6).toString('hex');
    engine.faults.arm('call.result.before-commit', { kind: 'throw' }, { when: (c) => c.callKey?.endsWith(`write-${tag}`) === true });
    const e = await submit(acme, 'e2e.exec.write', tag);
    await eventOf(e.id, 'execution.outcome_unknown');
    return e;
  }

  beforeAll(async () => {
    t = await startTestApp();
    engine = t.app.get(Engine);
    db = t.app.get(DataSource);
    for (const workflow of [done, boom, hold, write]) engine.register(workflow as unknown as Workflow);
    acme = await t.createOrganization('Acme');
    other = await t.createOrganization('Other');
  });
  afterAll(async () => {
    engine.faults.disarm();
    await t?.close();
  });

  describe('GET /v1/executions/{id}', () => {
    it('answers exactly { id, kind, state, generation, resource } for a completed execution', async () => {
      const e = await submit(acme, 'e2e.exec.done');
      expect(await engine.waitForEnd(e.id)).toBe('completed');
      const res = await get(acme, e.id);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toStrictEqual({ id: e.id, kind: 'e2e.exec.done', state: 'completed', generation: 1, resource: { type: 'turn', id: e.resourceId }, paused: false, limits: null, spent: null, stop: null });
    });

    it('adds errorId and category only when the execution failed, and keeps the cause sealed', async () => {
      const e = await submit(acme, 'e2e.exec.boom');
      expect(await engine.waitForEnd(e.id)).toBe('failed');
      const res = await get(acme, e.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body as object).sort()).toEqual(['category', 'errorId', 'generation', 'id', 'kind', 'limits', 'paused', 'resource', 'spent', 'state', 'stop']);
      expect(res.body).toEqual({
        id: e.id,
        kind: 'e2e.exec.boom',
        state: 'failed',
        generation: 1,
        resource: { type: 'turn', id: e.resourceId },
        paused: false,
        limits: null,
        spent: null,
        stop: null,
        errorId: expect.stringMatching(UUID),
        category: 'internal',
      });
      expect(res.text).not.toContain(SECRET);
      const rows = (await db.query('SELECT category FROM error_records WHERE id = $1', [(res.body as { errorId: string }).errorId])) as unknown[];
      expect(rows).toEqual([{ category: 'internal' }]);
    });

    it('answers a running execution with its live state and no errorId/category', async () => {
      const tag = randomBytes(6).toString('hex');
      const running = latch(tag);
      const e = await submit(acme, 'e2e.exec.hold', tag);
      await running;
      const res = await get(acme, e.id);
      expect(res.body).toStrictEqual({ id: e.id, kind: 'e2e.exec.hold', state: 'running', generation: 1, resource: { type: 'turn', id: e.resourceId }, paused: false, limits: null, spent: null, stop: null });
      await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme)).expect(202);
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
    });

    it('needs an API key (401 Unauthenticated)', async () => {
      const e = await submit(acme, 'e2e.exec.done');
      const res = await t.http().get(`/v1/executions/${e.id}`);
      expectDeclaredNoErrorId(res, 401, 'Unauthenticated');
    });

    it("[IDN-08] another organization's execution is 404 ExecutionNotFound, identical to an unknown or malformed id", async () => {
      const e = await submit(acme, 'e2e.exec.done');
      expect(await engine.waitForEnd(e.id)).toBe('completed');
      const foreign = await get(other, e.id);
      const unknown = await get(other, newId());
      const malformed = await get(other, 'not-a-uuid');
      const numeric = await get(other, '12345');
      expectDeclaredNoErrorId(foreign, 404, 'ExecutionNotFound');
      for (const res of [unknown, malformed, numeric]) {
        expect({ status: res.status, body: res.body as unknown }).toEqual({ status: foreign.status, body: foreign.body as unknown });
        expect(res.headers['content-type']).toBe(foreign.headers['content-type']);
      }
      expect(foreign.text).not.toContain(e.id);
      // The owner still sees it.
      expect((await get(acme, e.id)).status).toBe(200);
    });

    it("[IDN-08] the other routes refuse another organization's execution the same way, and change nothing", async () => {
      const tag = randomBytes(6).toString('hex');
      const running = latch(tag);
      const e = await submit(acme, 'e2e.exec.hold', tag);
      await running;
      const unknownId = newId();
      const attempts: Array<[string, (id: string) => Promise<Response>]> = [
        ['cancel', (id) => t.http().post(`/v1/executions/${id}/cancel`).set('authorization', as(other))],
        ['decision', (id) => t.http().post(`/v1/executions/${id}/decision`).set('authorization', as(other)).send({ decision: 'stop' })],
        ['events', (id) => t.http().get(`/v1/executions/${id}/events?after=0`).set('authorization', as(other))],
      ];
      for (const [route, send] of attempts) {
        const foreign = await send(e.id);
        const unknown = await send(unknownId);
        const malformed = await send('nope');
        expectDeclaredNoErrorId(foreign, 404, 'ExecutionNotFound');
        expect({ route, unknown: unknown.body as unknown, malformed: malformed.body as unknown }).toEqual({
          route,
          unknown: foreign.body as unknown,
          malformed: foreign.body as unknown,
        });
      }
      const after = await get(acme, e.id);
      expect((after.body as { state: string }).state).toBe('running');
      expect(aborted.has(tag)).toBe(false);
      const cancels = (await db.query(`SELECT count(*)::int AS n FROM execution_signals WHERE execution_id = $1 AND name = 'cancel'`, [e.id])) as Array<{ n: number }>;
      expect(cancels[0]!.n).toBe(0);
      await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme)).expect(202);
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
    });

    it('[IDN-11] a platform execution (service scope, no organization) is 404 for every organization key', async () => {
      const tag = randomBytes(6).toString('hex');
      const { executionId } = await engine.submit({
        workflow: 'e2e.exec.done',
        input: { tag },
        scope: { kind: 'service', id: newId(), organizationId: null },
        resource: { type: 'turn', id: newId() },
      });
      expect(await engine.waitForEnd(executionId)).toBe('completed');
      const unknown = await get(acme, newId());
      expectDeclaredNoErrorId(unknown, 404, 'ExecutionNotFound');
      for (const org of [acme, other]) {
        const res = await get(org, executionId);
        expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
        const events = await t.http().get(`/v1/executions/${executionId}/events?after=0`).set('authorization', as(org));
        expect({ status: events.status, body: events.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
        const cancel = await t.http().post(`/v1/executions/${executionId}/cancel`).set('authorization', as(org));
        expect({ status: cancel.status, body: cancel.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
      }
    });
  });

  describe('POST /v1/executions/{id}/cancel', () => {
    it('[EXE-12] answers 202 { id, state: cancelling } on a running execution, which then ends cancelled', async () => {
      const tag = randomBytes(6).toString('hex');
      const running = latch(tag);
      const e = await submit(acme, 'e2e.exec.hold', tag);
      await running;
      const res = await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme));
      expect(res.status).toBe(202);
      expect(res.body).toStrictEqual({ id: e.id, state: 'cancelling' });
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
      expect(aborted.has(tag)).toBe(true);
      const view = await get(acme, e.id);
      expect(view.body).toStrictEqual({ id: e.id, kind: 'e2e.exec.hold', state: 'cancelled', generation: 1, resource: { type: 'turn', id: e.resourceId }, paused: false, limits: null, spent: null, stop: null });
      const ended = await eventOf(e.id, 'execution.ended');
      expect(ended).toMatchObject({ state: 'cancelled' });
    });

    it('[EXE-12] on a final execution answers 202 with its final state and changes nothing', async () => {
      const completed = await submit(acme, 'e2e.exec.done');
      const failed = await submit(acme, 'e2e.exec.boom');
      expect(await engine.waitForEnd(completed.id)).toBe('completed');
      expect(await engine.waitForEnd(failed.id)).toBe('failed');
      for (const [e, state] of [
        [completed, 'completed'],
        [failed, 'failed'],
      ] as const) {
        const before = await get(acme, e.id);
        const events = (await db.query('SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1', [e.id])) as Array<{ n: number }>;
        const res = await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme));
        expect(res.status).toBe(202);
        expect(res.body).toStrictEqual({ id: e.id, state });
        const again = await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme));
        expect(again.body).toStrictEqual({ id: e.id, state });
        expect((await get(acme, e.id)).body).toStrictEqual(before.body);
        const eventsAfter = (await db.query('SELECT count(*)::int AS n FROM execution_events WHERE execution_id = $1', [e.id])) as Array<{ n: number }>;
        expect(eventsAfter).toEqual(events);
        const cancels = (await db.query(`SELECT count(*)::int AS n FROM execution_signals WHERE execution_id = $1 AND name = 'cancel'`, [e.id])) as Array<{ n: number }>;
        expect(cancels[0]!.n).toBe(0);
      }
    });

    it('[EXE-12] a second cancel of a cancelled execution answers cancelled', async () => {
      const tag = randomBytes(6).toString('hex');
      const running = latch(tag);
      const e = await submit(acme, 'e2e.exec.hold', tag);
      await running;
      await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme)).expect(202);
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
      const res = await t.http().post(`/v1/executions/${e.id}/cancel`).set('authorization', as(acme));
      expect(res.status).toBe(202);
      expect(res.body).toStrictEqual({ id: e.id, state: 'cancelled' });
    });
  });

  describe('POST /v1/executions/{id}/decision', () => {
    it('answers 409 ExecutionNotAwaitingDecision when the execution is not in outcome_unknown', async () => {
      const completed = await submit(acme, 'e2e.exec.done');
      expect(await engine.waitForEnd(completed.id)).toBe('completed');
      const tag = randomBytes(6).toString('hex');
      const running = latch(tag);
      const live = await submit(acme, 'e2e.exec.hold', tag);
      await running;
      for (const [e, state] of [
        [completed, 'completed'],
        [live, 'running'],
      ] as const) {
        for (const decision of ['succeeded', 'failed', 'stop']) {
          const res = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision });
          expectDeclaredNoErrorId(res, 409, 'ExecutionNotAwaitingDecision');
        }
        expect(((await get(acme, e.id)).body as { state: string }).state).toBe(state);
      }
      expect(aborted.has(tag)).toBe(false);
      await t.http().post(`/v1/executions/${live.id}/cancel`).set('authorization', as(acme)).expect(202);
      expect(await engine.waitForEnd(live.id)).toBe('cancelled');
    });

    it('answers 400 InvalidInput with issues path `decision` on a bad or missing decision', async () => {
      const e = await submit(acme, 'e2e.exec.done');
      expect(await engine.waitForEnd(e.id)).toBe('completed');
      for (const body of [{ decision: 'maybe' }, {}, { decision: 3 }, { decision: 'SUCCEEDED' }]) {
        const res = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send(body);
        expectDeclaredNoErrorId(res, 400, 'InvalidInput');
        expect(issuePaths(res)).toEqual(expect.arrayContaining(['decision']));
        expect(new Set(issuePaths(res))).toEqual(new Set(['decision']));
      }
      const badResult = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision: 'succeeded', result: 5 });
      expectDeclaredNoErrorId(badResult, 400, 'InvalidInput');
      expect(issuePaths(badResult)).toEqual(['result']);
    });

    it('[RES-02][CALL-03] a lost unsafe write waits in outcome_unknown; `succeeded` with a result completes with that result, sent once', async () => {
      const e = await lostWrite();
      expect(sends.get(e.tag)).toBe(1);
      const view = await get(acme, e.id);
      expect(view.body).toStrictEqual({ id: e.id, kind: 'e2e.exec.write', state: 'outcome_unknown', generation: 1, resource: { type: 'turn', id: (view.body as { resource: { id: string } }).resource.id }, paused: false, limits: null, spent: null, stop: null });
      const calls = (await db.query('SELECT status, safe FROM execution_calls WHERE execution_id = $1', [e.id])) as unknown[];
      expect(calls).toEqual([{ status: 'unknown', safe: false }]);

      const decided = { sent: 1, by: 'operator', ref: 'r-42' };
      const res = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision: 'succeeded', result: decided });
      expect(res.status).toBe(202);
      expect(Object.keys(res.body as object).sort()).toEqual(['id', 'state']);
      expect((res.body as { id: string }).id).toBe(e.id);
      expect(['queued', 'running', 'completed']).toContain((res.body as { state: string }).state);

      expect(await engine.waitForEnd(e.id)).toBe('completed');
      expect(await engine.result(e.id)).toEqual({ receipt: decided });
      expect(await eventOf(e.id, 'probe.written')).toMatchObject({ receipt: decided });
      // The outside write was never requested again: the decided result was reused.
      expect(sends.get(e.tag)).toBe(1);
      expect(((await get(acme, e.id)).body as { state: string }).state).toBe('completed');
      const after = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision: 'succeeded', result: decided });
      expectDeclaredNoErrorId(after, 409, 'ExecutionNotAwaitingDecision');
    });

    it("security: only the execution's actor, an owner or an admin may decide it; another member's `succeeded` is 403 and changes nothing", async () => {
      const add = async (role: string): Promise<string> =>
        ((await t.http().post('/v1/members').set('authorization', as(acme)).send({ role }).expect(201)).body as { apiKey: { secret: string } }).apiKey.secret;
      const [colleague, admin] = [await add('member'), await add('admin')];
      const e = await lostWrite();
      const forged = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', `Bearer ${colleague}`).send({ decision: 'succeeded', result: { forged: true } });
      expectDeclaredNoErrorId(forged, 403, 'Forbidden');
      expect(((await get(acme, e.id)).body as { state: string }).state).toBe('outcome_unknown');
      expect((await db.query('SELECT status FROM execution_calls WHERE execution_id = $1', [e.id])) as unknown[]).toEqual([{ status: 'unknown' }]);
      // An unknown or foreign ID stays 404 for that member: the refusal tells nothing more than the GET does.
      expectDeclaredNoErrorId(await t.http().post(`/v1/executions/${newId()}/decision`).set('authorization', `Bearer ${colleague}`).send({ decision: 'stop' }), 404, 'ExecutionNotFound');
      // An admin may decide any member's execution.
      const decided = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', `Bearer ${admin}`).send({ decision: 'stop' });
      expect(decided.status).toBe(202);
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
    });

    it("security: a member decides its own execution's unknown outside write", async () => {
      const res = await t.http().post('/v1/members').set('authorization', as(acme)).send({ role: 'member' }).expect(201);
      const member = res.body as { member: { id: string }; apiKey: { secret: string } };
      const tag = randomBytes(6).toString('hex');
      engine.faults.arm('call.result.before-commit', { kind: 'throw' }, { when: (c) => c.callKey?.endsWith(`write-${tag}`) === true });
      const { executionId } = await engine.submit({
        workflow: 'e2e.exec.write',
        input: { tag },
        scope: { kind: 'member', id: member.member.id, organizationId: acme.organizationId },
        resource: { type: 'turn', id: newId() },
      });
      await eventOf(executionId, 'execution.outcome_unknown');
      const decided = await t.http().post(`/v1/executions/${executionId}/decision`).set('authorization', `Bearer ${member.apiKey.secret}`).send({ decision: 'failed' });
      expect(decided.status).toBe(202);
      expect(await engine.waitForEnd(executionId)).toBe('failed');
    });

    it('[CALL-03][RES-02] `stop` on an execution in outcome_unknown ends it cancelled', async () => {
      const e = await lostWrite();
      expect(((await get(acme, e.id)).body as { state: string }).state).toBe('outcome_unknown');
      const res = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision: 'stop' });
      expect(res.status).toBe(202);
      expect(res.body).toStrictEqual({ id: e.id, state: 'cancelled' });
      expect(await engine.waitForEnd(e.id)).toBe('cancelled');
      const view = await get(acme, e.id);
      expect((view.body as { state: string }).state).toBe('cancelled');
      expect(Object.keys(view.body as object)).not.toContain('errorId');
      expect(sends.get(e.tag)).toBe(1);
    });

    it('[CALL-03][RES-02] `failed` on an execution in outcome_unknown ends it failed with an error record', async () => {
      const e = await lostWrite();
      const res = await t.http().post(`/v1/executions/${e.id}/decision`).set('authorization', as(acme)).send({ decision: 'failed' });
      expect(res.status).toBe(202);
      expect(res.body).toStrictEqual({ id: e.id, state: 'failed' });
      expect(await engine.waitForEnd(e.id)).toBe('failed');
      const view = await get(acme, e.id);
      expect(view.body).toMatchObject({ state: 'failed', errorId: expect.stringMatching(UUID), category: 'internal' });
      expect(sends.get(e.tag)).toBe(1);
    });
  });

  describe('OpenAPI', () => {
    interface Operation {
      responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
      parameters?: Array<{ name: string; in: string }>;
      requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
    }
    interface Doc {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    }

    it('[PLAT-01] /openapi.json documents the four execution routes with their responses', async () => {
      const doc = (await t.http().get('/openapi.json').expect(200)).body as Doc;
      const op = (path: string, method: string): Operation => {
        const found = doc.paths[path]?.[method];
        expect({ route: `${method} ${path}`, documented: found !== undefined }).toEqual({ route: `${method} ${path}`, documented: true });
        return found!;
      };
      const schemaOf = (operation: Operation, status: string, type = 'application/json'): { properties?: Record<string, unknown>; required?: string[] } => {
        const ref = operation.responses?.[status]?.content?.[type]?.schema?.$ref;
        expect(typeof ref).toBe('string');
        return doc.components.schemas[ref!.replace('#/components/schemas/', '')]!;
      };
      const statuses = (operation: Operation): string[] => Object.keys(operation.responses ?? {}).sort();

      const get = op('/v1/executions/{id}', 'get');
      expect(statuses(get)).toEqual(expect.arrayContaining(['200', '401', '404']));
      expect(Object.keys(schemaOf(get, '200').properties ?? {}).sort()).toEqual(['category', 'detail', 'errorId', 'generation', 'id', 'kind', 'limits', 'paused', 'resource', 'spent', 'state', 'stop']);
      expect(schemaOf(get, '200').required ?? []).not.toContain('errorId');

      const cancel = op('/v1/executions/{id}/cancel', 'post');
      expect(statuses(cancel)).toEqual(expect.arrayContaining(['202', '404']));
      expect(statuses(cancel).filter((s) => s.startsWith('2'))).toEqual(['202']);
      expect(Object.keys(schemaOf(cancel, '202').properties ?? {}).sort()).toEqual(['id', 'state']);

      const decision = op('/v1/executions/{id}/decision', 'post');
      expect(statuses(decision)).toEqual(expect.arrayContaining(['202', '400', '404', '409']));
      expect(statuses(decision).filter((s) => s.startsWith('2'))).toEqual(['202']);
      expect(Object.keys(schemaOf(decision, '202').properties ?? {}).sort()).toEqual(['id', 'state']);
      const requestRef = decision.requestBody?.content?.['application/json']?.schema?.$ref;
      expect(typeof requestRef).toBe('string');
      const requestSchema = doc.components.schemas[requestRef!.replace('#/components/schemas/', '')]!;
      expect(Object.keys(requestSchema.properties ?? {}).sort()).toEqual(['decision', 'result']);
      expect((requestSchema.properties as { decision: { enum?: string[] } }).decision.enum?.sort()).toEqual(['failed', 'stop', 'succeeded']);

      const events = op('/v1/executions/{id}/events', 'get');
      expect(statuses(events)).toEqual(expect.arrayContaining(['200', '400', '404']));
      expect(Object.keys(schemaOf(events, '200').properties ?? {}).sort()).toEqual(['ended', 'events', 'next']);
      expect(Object.keys(events.responses!['200']!.content ?? {})).toEqual(expect.arrayContaining(['application/json', 'text/event-stream']));
      const query = (events.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect(query).toEqual(expect.arrayContaining(['after', 'wait']));
      const headers = (events.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name.toLowerCase());
      expect(headers).toContain('last-event-id');
    });
  });
});
