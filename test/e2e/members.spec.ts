import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/** Members, roles, scoped API keys and the audit log of an organization. */
describe('members, roles, key scopes and audit', () => {
  let t: TestApp;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await t.createOrganization('Roles');
  });
  afterAll(async () => {
    await t?.close();
  });

  const add = async (secret: string, role: string) => {
    const res = await t.http().post('/v1/members').set('authorization', bearer(secret)).send({ role, name: `A ${role}` });
    return res;
  };
  const me = (secret: string) => t.http().get('/v1/me').set('authorization', bearer(secret));

  it('[FW-09] owners and admins add members with a role and a first key; only an owner adds or manages an owner', async () => {
    const adminRes = await add(owner.secret, 'admin');
    expect(adminRes.status).toBe(201);
    const admin = adminRes.body as { member: { id: string; role: string }; apiKey: { secret: string } };
    expect(admin.member.role).toBe('admin');
    expect((await me(admin.apiKey.secret)).body).toMatchObject({ member: { id: admin.member.id, role: 'admin' } });
    expect((await add(admin.apiKey.secret, 'member')).status).toBe(201);
    const refused = await add(admin.apiKey.secret, 'owner');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ type: 'Forbidden' });
    const invalid = await add(owner.secret, 'emperor');
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ issues: [{ path: 'role' }] });
    // The admin cannot demote or remove the owner.
    expect((await t.http().patch(`/v1/members/${owner.memberId}`).set('authorization', bearer(admin.apiKey.secret)).send({ role: 'viewer' })).status).toBe(403);
    expect((await t.http().delete(`/v1/members/${owner.memberId}`).set('authorization', bearer(admin.apiKey.secret))).status).toBe(403);
  });

  it('[FW-09] the last owner can be neither demoted nor removed (409 LastOwner)', async () => {
    const org = await t.createOrganization('Solo');
    const demote = await t.http().patch(`/v1/members/${org.memberId}`).set('authorization', bearer(org.secret)).send({ role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.body).toMatchObject({ type: 'LastOwner' });
    const remove = await t.http().delete(`/v1/members/${org.memberId}`).set('authorization', bearer(org.secret));
    expect(remove.status).toBe(409);
  });

  it('[IDN-06] a role change applies to the very next request of every key of the member', async () => {
    const res = (await add(owner.secret, 'member')).body as { member: { id: string }; apiKey: { secret: string } };
    await t.http().post('/v1/model-providers').set('authorization', bearer(res.apiKey.secret)).send({ name: 'x', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(403);
    await t.http().patch(`/v1/members/${res.member.id}`).set('authorization', bearer(owner.secret)).send({ role: 'admin' }).expect(200);
    await t.http().post('/v1/model-providers').set('authorization', bearer(res.apiKey.secret)).send({ name: 'x', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
    await t.http().patch(`/v1/members/${res.member.id}`).set('authorization', bearer(owner.secret)).send({ role: 'viewer' }).expect(200);
    expect((await me(res.apiKey.secret)).body).toMatchObject({ member: { role: 'viewer', permissions: expect.not.arrayContaining(['bots.write']) } });
  });

  it('[IDN-06] removing a member revokes its keys at once; it disappears from the list', async () => {
    const res = (await add(owner.secret, 'member')).body as { member: { id: string }; apiKey: { secret: string } };
    await me(res.apiKey.secret).expect(200);
    const removed = await t.http().delete(`/v1/members/${res.member.id}`).set('authorization', bearer(owner.secret));
    expect(removed.status).toBe(200);
    expect((await me(res.apiKey.secret)).status).toBe(401);
    const list = await t.http().get('/v1/members?limit=200').set('authorization', bearer(owner.secret)).expect(200);
    expect((list.body as { data: Array<{ id: string }> }).data.map((m) => m.id)).not.toContain(res.member.id);
    expect((await t.http().delete(`/v1/members/${res.member.id}`).set('authorization', bearer(owner.secret))).status).toBe(404);
  });

  it('[IDN-02] an API key with scopes only narrows its member: a scope the member lacks is refused, and the key cannot do more than its scopes', async () => {
    const member = (await add(owner.secret, 'member')).body as { apiKey: { secret: string } };
    const wider = await t.http().post('/v1/api-keys').set('authorization', bearer(member.apiKey.secret)).send({ name: 'too wide', scopes: ['bots.read', 'models.write'] });
    expect(wider.status).toBe(400);
    expect(wider.body).toMatchObject({ type: 'InvalidInput', issues: [{ path: 'scopes.1' }] });
    const unknown = await t.http().post('/v1/api-keys').set('authorization', bearer(member.apiKey.secret)).send({ name: 'bad', scopes: ['everything'] });
    expect(unknown.status).toBe(400);
    const narrow = await t.http().post('/v1/api-keys').set('authorization', bearer(member.apiKey.secret)).send({ name: 'read bots', scopes: ['bots.read', 'organization.read'] });
    expect(narrow.status).toBe(201);
    const scoped = (narrow.body as { secret: string; scopes: string[] });
    expect(scoped.scopes).toEqual(['bots.read', 'organization.read']);
    await t.http().get('/v1/bots').set('authorization', bearer(scoped.secret)).expect(200);
    const write = await t.http().post('/v1/bots').set('authorization', bearer(scoped.secret)).send({ name: 'b', model: 'x/y' });
    expect(write.status).toBe(403);
    expect((await me(scoped.secret)).body).toMatchObject({ member: { permissions: ['organization.read', 'bots.read'] } });
    // A scoped key cannot mint a wider key either.
    expect((await t.http().post('/v1/api-keys').set('authorization', bearer(scoped.secret)).send({ name: 'x' })).status).toBe(403);
  });

  it('the audit log records key, role and member changes with their actor, without secrets; owners and admins read it', async () => {
    const org = await t.createOrganization('Audited');
    const added = (await add(org.secret, 'member')).body as { member: { id: string }; apiKey: { secret: string } };
    await t.http().patch(`/v1/members/${added.member.id}`).set('authorization', bearer(org.secret)).send({ role: 'viewer' }).expect(200);
    const key = await t.http().post('/v1/api-keys').set('authorization', bearer(org.secret)).send({ name: 'temp' }).expect(201);
    const keyBody = key.body as { id: string; secret: string };
    await t.http().delete(`/v1/api-keys/${keyBody.id}`).set('authorization', bearer(org.secret)).expect(200);
    await t.http().delete(`/v1/api-keys/${keyBody.id}`).set('authorization', bearer(org.secret)).expect(200);
    await t.http().delete(`/v1/members/${added.member.id}`).set('authorization', bearer(org.secret)).expect(200);
    const log = await t.http().get('/v1/audit-events').set('authorization', bearer(org.secret)).expect(200);
    const events = (log.body as { data: Array<{ action: string; actor: { kind: string; id: string }; target: { type: string; id: string } }> }).data;
    expect(events.map((e) => e.action)).toEqual(['member.added', 'member.role-changed', 'api-key.created', 'api-key.revoked', 'member.removed']);
    expect(events.every((e) => e.actor.kind === 'member' && e.actor.id === org.memberId)).toBe(true);
    expect(JSON.stringify(log.body)).not.toContain(keyBody.secret);
    expect(JSON.stringify(log.body)).not.toContain(added.apiKey.secret);
    // Another organization's log does not show them.
    const other = await t.http().get('/v1/audit-events').set('authorization', bearer(owner.secret)).expect(200);
    expect(JSON.stringify(other.body)).not.toContain(added.member.id);
  });
});
