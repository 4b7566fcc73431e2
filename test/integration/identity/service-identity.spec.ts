import {
  effectivePermissions,
  Forbidden,
  identityForMember,
  identityForService,
  newId,
  type ApiKeyId,
  type ExecutionIdentity,
  type MemberCaller,
  type MemberId,
  type OrganizationId,
} from '@openbot/domain';
import { Engine, type ExecutionEvent, type IdentityCheck, type Json, type Workflow } from '@openbot/engine';
import type { EngineNode } from '@openbot/engine/node';
import { withTransaction } from '@openbot/engine/node';
import { randomBytes } from 'node:crypto';
import { SqlIdentityCheck } from '../../../libs/platform/src/identity/sql-identity-check';
import { startTestApp, type TestApp } from '../../support/test-app';
import { startTestEngine, type TestEngine } from '../../support/test-engine';
import { deferred, eventually, executionRow, forceTakeover, OutsideService, type Deferred } from '../engine/helpers';

/**
 * ServiceIdentity (IDN-10, IDN-11): work a service of the platform or of one organization runs,
 * with no member ID, on the same execution store, command log, events and recovery as member
 * work — and kept apart from it by scope and by each workflow's audience.
 */

/** The first owner of a `service.job` run holds its phase until released (so another node can take it over), by input tag. */
const holds = new Map<string, Deferred>();
const outside = new OutsideService((request) => ({ done: request.from }));

/** A service workflow: one outside call and one event; generation 1 may be held before it. */
const serviceJob: Workflow<{ [key: string]: Json; tag: string; done: boolean; by: string | null }, { tag: string }> = {
  name: 'test.service.job',
  audience: 'service',
  initial: ({ tag }) => ({ tag, done: false, by: null }),
  next: (s) => (s.done ? { end: 'completed', result: { by: s.by } } : { phase: 'work' }),
  phases: {
    work: {
      async run({ state, calls, emit, activity, signal }) {
        const hold = holds.get(state.tag);
        if (hold && activity.endsWith('#1')) {
          await Promise.race([
            hold.promise,
            new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('gate closed')), { once: true })),
          ]);
        }
        const answer = await calls.call('report', { safe: true }, (request) => outside.send(request, activity));
        emit('service.reported', { answer });
        return { state: { ...state, done: true, by: activity } };
      },
    },
  },
};

const memberOnly: Workflow = {
  name: 'test.member.only',
  audience: 'member',
  initial: () => null,
  next: () => ({ end: 'completed' }),
  phases: {},
};

const serviceOnly: Workflow = { ...memberOnly, name: 'test.service.only', audience: 'service' };

/** No audience declared: either scope may submit it (used to compare command keys across scopes). */
const either: Workflow = { ...memberOnly, name: 'test.either', audience: undefined };

/** A member workflow whose phase tries to start a service workflow as its child. */
const crossesOver: Workflow<{ [key: string]: Json; started: boolean }, null> = {
  name: 'test.member.crosses',
  audience: 'member',
  initial: () => ({ started: false }),
  next: (s) => (s.started ? { end: 'completed' } : { phase: 'spawn' }),
  phases: {
    spawn: {
      async run({ state, startChild }) {
        startChild({ workflow: 'test.service.only', input: null });
        return { state: { ...state, started: true } };
      },
    },
  },
};

/** Records each check and answers with the real product check (on the test engine's pool, once it exists). */
class RecordingCheck implements IdentityCheck {
  readonly asked: string[] = [];
  inner: SqlIdentityCheck | null = null;
  check(identity: Json, executionId: string) {
    this.asked.push(executionId);
    return this.inner!.check(identity);
  }
}

async function events(engine: Engine, id: string): Promise<ExecutionEvent[]> {
  const all: ExecutionEvent[] = [];
  for await (const event of engine.observe(id, 0, undefined, false)) all.push(event);
  return all;
}

describe('ServiceIdentity on the engine', () => {
  let t: TestEngine;
  let b: EngineNode;
  let check: RecordingCheck;
  let organizationId: string;
  let platformService: string;
  let orgService: string;

  beforeAll(async () => {
    check = new RecordingCheck();
    t = await startTestEngine({ identityCheck: check });
    check.inner = new SqlIdentityCheck(t.pool);
    for (const workflow of [serviceJob, memberOnly, serviceOnly, either, crossesOver] as Workflow[]) t.engine.register(workflow);
    const nodeB = await t.node('node-b', { identityCheck: check });
    b = nodeB.engine;
    b.register(serviceJob as unknown as Workflow);
    await t.engine.start();
    await b.start();

    organizationId = newId();
    await t.database.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [organizationId, 'Service Org']);
    platformService = newId();
    orgService = newId();
    await t.database.query('INSERT INTO services (id, organization_id, name) VALUES ($1, NULL, $2), ($3, $4, $5)', [platformService, 'platform job', orgService, organizationId, 'org job']);
  });
  afterAll(async () => {
    await t.close();
  });

  const scopeOf = (service: string, owner: string | null) => ({ kind: 'service' as const, id: service, organizationId: owner });

  it('[IDN-10] a service execution (platform-owned and organization-owned) uses the same store, command keys, events and recovery', async () => {
    for (const [service, owner] of [
      [platformService, null],
      [orgService, organizationId],
    ] as const) {
      const identity = identityForService({ id: service, organizationId: owner });
      const tag = newId();
      holds.set(tag, deferred());
      const submit = () =>
        t.engine.submit({ workflow: serviceJob.name, input: { tag }, scope: scopeOf(service, owner), commandKey: 'nightly-report', identity: identity as unknown as Json });

      // Command keys: the same key in the same service scope answers the same execution (EXE-02).
      const first = await submit();
      expect(first.created).toBe(true);
      expect(await submit()).toEqual({ executionId: first.executionId, created: false });
      const [command] = await t.database.query<{ scope_kind: string; scope_id: string }>('SELECT scope_kind, scope_id FROM execution_commands WHERE execution_id = $1', [first.executionId]);
      expect(command).toEqual({ scope_kind: 'service', scope_id: service });

      // Store: one executions row, no member anywhere, the owner in organization_id, identity sealed.
      const row = await executionRow(t.database, first.executionId);
      expect(row).toMatchObject({ workflow: serviceJob.name, scope_kind: 'service', scope_id: service, organization_id: owner });
      expect(await t.engine.identity(first.executionId)).toEqual(identity);

      // Recovery: node A holds the phase; its lease runs out and node B takes over (EXE-03), after
      // B checked the service's current access (IDN-06, IDN-10).
      await eventually(async () => (await t.engine.get(first.executionId))?.state === 'running', 'the run');
      const asked = check.asked.length;
      await forceTakeover(t.database, b, first.executionId, 1);
      expect(await b.waitForEnd(first.executionId)).toBe('completed');
      holds.get(tag)!.resolve();
      expect(check.asked.slice(asked).filter((id) => id === first.executionId).length).toBeGreaterThanOrEqual(2);
      expect(await b.get(first.executionId)).toMatchObject({ state: 'completed', generation: 2, organizationId: owner, scope: { kind: 'service', id: service } });
      expect(await b.result(first.executionId)).toEqual({ by: 'work#2' });

      // Events: the same log and reader as member work.
      const log = await events(t.engine, first.executionId);
      expect(log.map((e) => e.type)).toEqual(['service.reported', 'execution.ended']);
      expect(log.map((e) => e.seq)).toEqual([1, 2]);
      expect(log[0]).toMatchObject({ answer: { done: 'work#2' } });
    }
  });

  it('[IDN-10] a disabled service stops its work at the next check: a takeover after disabling ends forbidden', async () => {
    const service = newId();
    await t.database.query('INSERT INTO services (id, organization_id, name) VALUES ($1, $2, $3)', [service, organizationId, 'soon disabled']);
    const identity: ExecutionIdentity = identityForService({ id: service, organizationId });
    const tag = newId();
    holds.set(tag, deferred());
    const { executionId } = await t.engine.submit({ workflow: serviceJob.name, input: { tag }, scope: scopeOf(service, organizationId), identity: identity as unknown as Json });
    await eventually(async () => (await t.engine.get(executionId))?.state === 'running', 'the run');
    await t.database.query('UPDATE services SET disabled_at = now() WHERE id = $1', [service]);
    const sent = outside.calls;
    await forceTakeover(t.database, b, executionId, 1);
    expect(await b.waitForEnd(executionId)).toBe('failed');
    holds.get(tag)!.resolve();
    expect(await b.get(executionId)).toMatchObject({ state: 'failed', category: 'forbidden' });
    expect(outside.calls).toBe(sent);
  });

  it('[IDN-11] a service workflow refuses a member command and a member workflow refuses a service command; the same command key in a member and a service scope are two commands', async () => {
    const count = async () => (await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM executions'))[0]!.n;
    const before = await count();
    const member = { kind: 'member' as const, id: newId(), organizationId };
    const service = scopeOf(orgService, organizationId);

    const refused = await t.engine.submit({ workflow: serviceOnly.name, input: null, scope: member, commandKey: 'k' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Forbidden);
    expect(refused).toMatchObject({ kind: 'forbidden', type: 'Forbidden', message: expect.stringMatching(/member cannot send through the service workflow/) });
    await expect(t.engine.submit({ workflow: memberOnly.name, input: null, scope: service })).rejects.toMatchObject({
      kind: 'forbidden',
      message: expect.stringMatching(/service cannot enter the member workflow/),
    });
    // Inside a feature's transaction too: nothing is written, the transaction rolls back.
    await expect(
      withTransaction(t.pool, async (tx) => {
        await t.engine.in(tx).submit({ workflow: memberOnly.name, input: null, scope: service });
      }),
    ).rejects.toBeInstanceOf(Forbidden);
    await expect(withTransaction(t.pool, (tx) => t.engine.in(tx).submit({ workflow: serviceOnly.name, input: null, scope: member }, { held: true }))).rejects.toBeInstanceOf(Forbidden);
    expect(await count()).toBe(before);
    expect((await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM execution_commands WHERE command_key = 'k'`))[0]!.n).toBe(0);

    // Member work cannot start service work as its child either: the phase fails, no child exists.
    const crossing = await t.engine.submit({ workflow: crossesOver.name, input: null, scope: member });
    expect(await t.engine.waitForEnd(crossing.executionId)).toBe('failed');
    expect(await t.database.query('SELECT id FROM executions WHERE parent_id = $1', [crossing.executionId])).toEqual([]);

    // The matching audiences are admitted.
    const okMember = await t.engine.submit({ workflow: memberOnly.name, input: null, scope: member });
    const okService = await t.engine.submit({ workflow: serviceOnly.name, input: null, scope: service });
    expect(await t.engine.waitForEnd(okMember.executionId)).toBe('completed');
    expect(await t.engine.waitForEnd(okService.executionId)).toBe('completed');

    // Command keys belong to a scope: the same key and the same scope ID under a member and a service are two commands.
    const sharedId = newId();
    const asMember = await t.engine.submit({ workflow: either.name, input: null, scope: { kind: 'member', id: sharedId, organizationId }, commandKey: 'same-key' });
    const asService = await t.engine.submit({ workflow: either.name, input: null, scope: { kind: 'service', id: sharedId, organizationId }, commandKey: 'same-key' });
    expect(asMember.created).toBe(true);
    expect(asService.created).toBe(true);
    expect(asService.executionId).not.toBe(asMember.executionId);
    const keyed = await t.database.query<{ scope_kind: string }>(`SELECT scope_kind FROM execution_commands WHERE command_key = 'same-key' ORDER BY scope_kind`);
    expect(keyed.map((r) => r.scope_kind)).toEqual(['member', 'service']);
    // And each still answers its own execution on a retry.
    expect((await t.engine.submit({ workflow: either.name, input: null, scope: { kind: 'service', id: sharedId, organizationId }, commandKey: 'same-key' })).executionId).toBe(asService.executionId);
  });
});

describe('ServiceIdentity behind the public API', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    t.app.get(Engine).register(serviceOnly);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('[IDN-11] organization endpoints never read platform executions', async () => {
    const acme = await t.createOrganization('Acme');
    const other = await t.createOrganization('Other');
    const engine = t.app.get(Engine);
    const platformService = newId();
    await t.database.query('INSERT INTO services (id, organization_id, name) VALUES ($1, NULL, $2)', [platformService, 'platform maintenance']);
    const platform = await engine.submit({
      workflow: serviceOnly.name,
      input: null,
      scope: { kind: 'service', id: platformService, organizationId: null },
      identity: identityForService({ id: platformService, organizationId: null }) as unknown as Json,
    });
    expect(await engine.waitForEnd(platform.executionId)).toBe('completed');

    const unknownId = newId();
    const unknown = await t.http().get(`/v1/executions/${unknownId}`).set('authorization', `Bearer ${acme.secret}`);
    expect(unknown.status).toBe(404);
    for (const org of [acme, other]) {
      const auth = `Bearer ${org.secret}`;
      const read = await t.http().get(`/v1/executions/${platform.executionId}`).set('authorization', auth);
      expect({ status: read.status, body: read.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
      const log = await t.http().get(`/v1/executions/${platform.executionId}/events?after=0`).set('authorization', auth);
      expect({ status: log.status, body: log.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
      const cancel = await t.http().post(`/v1/executions/${platform.executionId}/cancel`).set('authorization', auth);
      expect({ status: cancel.status, body: cancel.body as unknown }).toEqual({ status: 404, body: unknown.body as unknown });
    }

    // An organization's own service work is that organization's: visible to it, not to another one.
    const orgService = newId();
    await t.database.query('INSERT INTO services (id, organization_id, name) VALUES ($1, $2, $3)', [orgService, acme.organizationId, 'acme intake']);
    const owned = await engine.submit({
      workflow: serviceOnly.name,
      input: null,
      scope: { kind: 'service', id: orgService, organizationId: acme.organizationId },
      identity: identityForService({ id: orgService, organizationId: acme.organizationId }) as unknown as Json,
    });
    expect(await engine.waitForEnd(owned.executionId)).toBe('completed');
    const mine = await t.http().get(`/v1/executions/${owned.executionId}`).set('authorization', `Bearer ${acme.secret}`);
    expect({ status: mine.status, body: mine.body as unknown }).toEqual({ status: 200, body: expect.objectContaining({ id: owned.executionId, kind: serviceOnly.name, state: 'completed' }) });
    expect((await t.http().get(`/v1/executions/${owned.executionId}`).set('authorization', `Bearer ${other.secret}`)).status).toBe(404);

    // A member's key cannot push work through the service workflow (IDN-11): refused before anything is stored.
    const caller: MemberCaller = {
      kind: 'member',
      organizationId: acme.organizationId as OrganizationId,
      memberId: acme.memberId as MemberId,
      role: 'owner',
      apiKeyId: acme.apiKeyId as ApiKeyId,
      sessionId: null,
      permissions: effectivePermissions('owner', null),
    };
    await expect(
      engine.submit({
        workflow: serviceOnly.name,
        input: null,
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        identity: identityForMember(caller) as unknown as Json,
        commandKey: randomBytes(4).toString('hex'),
      }),
    ).rejects.toBeInstanceOf(Forbidden);
  });
});
