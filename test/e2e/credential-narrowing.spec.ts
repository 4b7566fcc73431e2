import { ROLE_PERMISSIONS, type Permission } from '@openbot/domain';
import { expectDeclaredNoErrorId } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A credential never mints one wider than itself: a new API key's rights are at most those of
 * the credential that creates it (also by default), and handing out a role (adding a member with
 * a first key, or changing a member's role) needs every permission of that role.
 */
describe('credentials only ever narrow', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrganization('Narrowing');
  });
  afterAll(async () => {
    await t?.close();
  });

  const permissionsOf = async (secret: string): Promise<Permission[]> =>
    ((await t.http().get('/v1/me').set('authorization', bearer(secret)).expect(200)).body as { member: { permissions: Permission[] } }).member.permissions;
  const keyWith = async (secret: string, body: Record<string, unknown>): Promise<{ secret: string; scopes: string[] | null }> =>
    (await t.http().post('/v1/api-keys').set('authorization', bearer(secret)).send(body).expect(201)).body as { secret: string; scopes: string[] | null };
  const addMember = async (secret: string, role: string) => t.http().post('/v1/members').set('authorization', bearer(secret)).send({ role });

  it('[IDN-02] a key scoped to api-keys.manage creates a key without scopes that has exactly its rights, not the whole role', async () => {
    // organization.read too, so that GET /v1/me can show what a key may do.
    const manager = await keyWith(org.secret, { name: 'key manager', scopes: ['api-keys.manage', 'organization.read'] });
    const minted = await keyWith(manager.secret, { name: 'minted' });
    expect(minted.scopes).toEqual(['api-keys.manage', 'organization.read']);
    expect(await permissionsOf(minted.secret)).toEqual(['organization.read', 'api-keys.manage']);
    // What the owner's role has beyond that stays out of reach of the minted key.
    await t.http().get('/v1/bots').set('authorization', bearer(minted.secret)).expect(403);
    await t.http().post('/v1/members').set('authorization', bearer(minted.secret)).send({ role: 'admin' }).expect(403);
    // It may narrow further, never widen.
    expect((await t.http().post('/v1/api-keys').set('authorization', bearer(minted.secret)).send({ name: 'wider', scopes: ['bots.read'] })).status).toBe(400);
  });

  it('[IDN-02] a key made by a scoped key stays within that key after the member is promoted', async () => {
    const member = (await addMember(org.secret, 'member')).body as { member: { id: string }; apiKey: { secret: string } };
    const scoped = await keyWith(member.apiKey.secret, { name: 'scoped', scopes: [...ROLE_PERMISSIONS.member] });
    const minted = await keyWith(scoped.secret, { name: 'minted' });
    expect([...(minted.scopes ?? [])].sort()).toEqual([...ROLE_PERMISSIONS.member].sort());
    await t.http().patch(`/v1/members/${member.member.id}`).set('authorization', bearer(org.secret)).send({ role: 'admin' }).expect(200);
    // Neither the scoped key nor the key it made gained the admin's rights.
    expect(await permissionsOf(scoped.secret)).not.toContain('members.manage');
    expect(await permissionsOf(minted.secret)).not.toContain('members.manage');
    // The member's first key (unscoped) follows the role, as before; so does a key it makes.
    const unscoped = await keyWith(member.apiKey.secret, { name: 'unscoped' });
    expect(unscoped.scopes).toBeNull();
    expect(await permissionsOf(unscoped.secret)).toContain('members.manage');
  });

  it('[IDN-02] a key scoped to members.manage cannot add or promote a member to a role with rights it lacks', async () => {
    const managerKey = await keyWith(org.secret, { name: 'member manager', scopes: ['members.manage', 'members.read'] });
    for (const role of ['viewer', 'member', 'admin', 'owner']) {
      const res = await addMember(managerKey.secret, role);
      expectDeclaredNoErrorId(res, 403, 'Forbidden');
    }
    const target = (await addMember(org.secret, 'viewer')).body as { member: { id: string } };
    for (const role of ['member', 'admin', 'owner']) {
      expectDeclaredNoErrorId(await t.http().patch(`/v1/members/${target.member.id}`).set('authorization', bearer(managerKey.secret)).send({ role }), 403, 'Forbidden');
    }
    const members = (await t.http().get('/v1/members?limit=200').set('authorization', bearer(org.secret)).expect(200)).body as { data: Array<{ id: string; role: string }> };
    expect(members.data.find((m) => m.id === target.member.id)?.role).toBe('viewer');
    expect(members.data.filter((m) => m.role === 'owner')).toHaveLength(1);
  });

  it('[IDN-02] a key holding every permission of a role may hand out that role and no wider one', async () => {
    const viewerMaker = await keyWith(org.secret, { name: 'viewer maker', scopes: ['members.manage', ...ROLE_PERMISSIONS.viewer] });
    const added = await addMember(viewerMaker.secret, 'viewer');
    expect(added.status).toBe(201);
    const viewer = added.body as { member: { id: string }; apiKey: { secret: string } };
    expect((await permissionsOf(viewer.apiKey.secret)).sort()).toEqual([...ROLE_PERMISSIONS.viewer].sort());
    expectDeclaredNoErrorId(await addMember(viewerMaker.secret, 'member'), 403, 'Forbidden');
    expectDeclaredNoErrorId(await t.http().patch(`/v1/members/${viewer.member.id}`).set('authorization', bearer(viewerMaker.secret)).send({ role: 'member' }), 403, 'Forbidden');
    // The owner's full credential still adds and promotes as before.
    await t.http().patch(`/v1/members/${viewer.member.id}`).set('authorization', bearer(org.secret)).send({ role: 'admin' }).expect(200);
  });

  it('[IDN-02] a key scoped to vaults.write without vaults.use cannot grant vaults.use on a Vault to anyone', async () => {
    const member = (await addMember(org.secret, 'member')).body as { member: { id: string }; apiKey: { secret: string } };
    const vault = (await t.http().post('/v1/vaults').set('authorization', bearer(org.secret)).send({ name: 'narrowed grants' }).expect(201)).body as { id: string };
    const writer = await keyWith(org.secret, { name: 'vault writer', scopes: ['vaults.read', 'vaults.write'] });
    const grant = (secret: string) => t.http().put(`/v1/vaults/${vault.id}/users`).set('authorization', bearer(secret)).send({ memberIds: [member.member.id] });
    expectDeclaredNoErrorId(await grant(writer.secret), 403, 'Forbidden');
    // The member was granted nothing: the Vault still refuses their change.
    const addItem = () =>
      t.http().post(`/v1/vaults/${vault.id}/items`).set('authorization', bearer(member.apiKey.secret)).send({ name: 'mine', fields: { k: 'v' }, allowedHosts: ['api.example.com'] });
    expectDeclaredNoErrorId(await addItem(), 403, 'Forbidden');
    // A key that holds vaults.use as well may grant it; so may the owner's full credential.
    const granter = await keyWith(org.secret, { name: 'vault granter', scopes: ['vaults.read', 'vaults.write', 'vaults.use'] });
    expect((await grant(granter.secret)).status).toBe(200);
    expect((await addItem()).status).toBe(201);
  });

  it("a 403 names the role when the member's role lacks the permission, and the key only when its scopes left it out", async () => {
    const viewer = (await addMember(org.secret, 'viewer')).body as { apiKey: { secret: string } };
    const byViewer = await t.http().get('/v1/audit-events').set('authorization', bearer(viewer.apiKey.secret));
    expectDeclaredNoErrorId(byViewer, 403, 'Forbidden');
    const viewerMessage = (byViewer.body as { message: string }).message;
    expect(viewerMessage).toContain('"audit.read"');
    expect(viewerMessage).toContain('your role viewer does not have');
    expect(viewerMessage).not.toContain('API key');
    // An admin's key narrowed to bots.read: the role has audit.read, the key's scopes left it out.
    const admin = (await addMember(org.secret, 'admin')).body as { apiKey: { secret: string } };
    const narrowed = await keyWith(admin.apiKey.secret, { name: 'bots only', scopes: ['bots.read'] });
    const byNarrowed = await t.http().get('/v1/audit-events').set('authorization', bearer(narrowed.secret));
    expectDeclaredNoErrorId(byNarrowed, 403, 'Forbidden');
    const narrowedMessage = (byNarrowed.body as { message: string }).message;
    expect(narrowedMessage).toContain('"audit.read"');
    expect(narrowedMessage).toContain('which this API key does not have');
    expect(narrowedMessage).toContain('your role admin has it');
  });
});
