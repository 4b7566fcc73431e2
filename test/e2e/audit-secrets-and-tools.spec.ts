import { bearer, addMember } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * The audit log (`GET /v1/audit-events`) records who changed where secrets live and where they
 * may go: Vaults, their users, items and `allowedHosts`; model providers; and the URLs and
 * headers of Bot tools. It names things (items, fields, hosts, header names), never a value.
 */

jest.setTimeout(120_000);

interface AuditEvent {
  actor: { kind: string; id: string | null };
  action: string;
  target: { type: string; id: string };
  details: Record<string, unknown>;
}

const VAULT_SECRET = 'sk-AUDIT-vault-value-5e1f';
const REPLACED_SECRET = 'sk-AUDIT-replaced-value-77aa';
const PROVIDER_KEY = 'sk-AUDIT-provider-key-0b9c';
const HEADER_SECRET = 'lit-AUDIT-header-value-d00d';
const HEADER_REPLACED = 'lit-AUDIT-header-new-value-f00f';

describe('audit of Vaults, model providers and Bot tools', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<TestApp['createOrganization']>>;

  beforeAll(async () => {
    t = await startTestApp();
    org = await t.createOrganization('Audited');
  });
  afterAll(async () => {
    await t?.close();
  });

  const as = (secret = org.secret) => bearer(secret);
  async function audit(): Promise<{ events: AuditEvent[]; text: string }> {
    const res = await t.http().get('/v1/audit-events?limit=200').set('authorization', as()).expect(200);
    return { events: (res.body as { data: AuditEvent[] }).data, text: res.text };
  }
  const about = (events: AuditEvent[], ...ids: string[]) => events.filter((e) => ids.includes(e.target.id)).map((e) => ({ action: e.action, actor: e.actor, target: e.target, details: e.details }));

  it('records Vault creation and deletion, users granted and revoked, items created, replaced, renamed, rehosted and deleted, never a value', async () => {
    const member = await addMember(t, org.organizationId, 'member');
    const owner = { kind: 'member', id: org.memberId };
    const vault = (await t.http().post('/v1/vaults').set('authorization', as()).send({ name: 'audited' }).expect(201)).body as { id: string };
    await t.http().put(`/v1/vaults/${vault.id}/users`).set('authorization', as()).send({ memberIds: [member.memberId] }).expect(200);
    // The same list again changes nothing and records nothing.
    await t.http().put(`/v1/vaults/${vault.id}/users`).set('authorization', as()).send({ memberIds: [member.memberId] }).expect(200);
    const item = (
      await t
        .http()
        .post(`/v1/vaults/${vault.id}/items`)
        .set('authorization', as(member.secret))
        .send({ name: 'stripe', fields: { key: VAULT_SECRET }, allowedHosts: ['api.stripe.com', 'backup.stripe.com'] })
        .expect(201)
    ).body as { id: string };
    await t.http().put(`/v1/vaults/${vault.id}/items/${item.id}`).set('authorization', as(member.secret)).send({ fields: { key: REPLACED_SECRET, account: 'acct' } }).expect(200);
    await t.http().patch(`/v1/vaults/${vault.id}/items/${item.id}`).set('authorization', as(member.secret)).send({ name: 'stripe-live', allowedHosts: ['api.stripe.com'] }).expect(200);
    await t.http().patch(`/v1/vaults/${vault.id}/items/${item.id}`).set('authorization', as()).send({ allowedHosts: ['api.stripe.com', 'files.stripe.com'] }).expect(200);
    await t.http().delete(`/v1/vaults/${vault.id}/items/${item.id}`).set('authorization', as(member.secret)).expect(200);
    await t.http().put(`/v1/vaults/${vault.id}/users`).set('authorization', as()).send({ memberIds: [] }).expect(200);
    await t.http().delete(`/v1/vaults/${vault.id}`).set('authorization', as()).expect(200);

    const { events, text } = await audit();
    const byMember = { kind: 'member', id: member.memberId };
    expect(about(events, vault.id, item.id)).toEqual([
      { action: 'vault.created', actor: owner, target: { type: 'vault', id: vault.id }, details: { name: 'audited', granted: [] } },
      { action: 'vault.users-changed', actor: owner, target: { type: 'vault', id: vault.id }, details: { granted: [member.memberId], revoked: [] } },
      {
        action: 'vault-item.created',
        actor: byMember,
        target: { type: 'vault-item', id: item.id },
        details: { vaultId: vault.id, name: 'stripe', fieldNames: ['key'], allowedHosts: ['api.stripe.com', 'backup.stripe.com'] },
      },
      { action: 'vault-item.fields-replaced', actor: byMember, target: { type: 'vault-item', id: item.id }, details: { vaultId: vault.id, name: 'stripe', fieldNames: ['account', 'key'] } },
      {
        action: 'vault-item.updated',
        actor: byMember,
        target: { type: 'vault-item', id: item.id },
        details: { vaultId: vault.id, name: { from: 'stripe', to: 'stripe-live' }, allowedHosts: { from: ['api.stripe.com', 'backup.stripe.com'], to: ['api.stripe.com'], added: [] } },
      },
      {
        action: 'vault-item.updated',
        actor: owner,
        target: { type: 'vault-item', id: item.id },
        details: { vaultId: vault.id, allowedHosts: { from: ['api.stripe.com'], to: ['api.stripe.com', 'files.stripe.com'], added: ['files.stripe.com'] } },
      },
      { action: 'vault-item.deleted', actor: byMember, target: { type: 'vault-item', id: item.id }, details: { vaultId: vault.id, name: 'stripe-live' } },
      { action: 'vault.users-changed', actor: owner, target: { type: 'vault', id: vault.id }, details: { granted: [], revoked: [member.memberId] } },
      { action: 'vault.deleted', actor: owner, target: { type: 'vault', id: vault.id }, details: { name: 'audited', items: 0 } },
    ]);
    for (const secret of [VAULT_SECRET, REPLACED_SECRET]) expect(text).not.toContain(secret);
  });

  it('records model providers created and deleted, with how the key is held and never the key', async () => {
    const vault = (await t.http().post('/v1/vaults').set('authorization', as()).send({ name: 'model keys' }).expect(201)).body as { id: string };
    const item = (
      await t
        .http()
        .post(`/v1/vaults/${vault.id}/items`)
        .set('authorization', as())
        .send({ name: 'openai', fields: { key: VAULT_SECRET }, allowedHosts: ['127.0.0.1'] })
        .expect(201)
    ).body as { id: string };
    const literal = (
      await t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'literal', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: PROVIDER_KEY }).expect(201)
    ).body as { id: string };
    const referenced = (
      await t
        .http()
        .post('/v1/model-providers')
        .set('authorization', as())
        .send({ name: 'referenced', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9', apiKey: { vaultItemId: item.id, field: 'key' } })
        .expect(201)
    ).body as { id: string };
    await t.http().delete(`/v1/model-providers/${literal.id}`).set('authorization', as()).expect(200);

    const { events, text } = await audit();
    const owner = { kind: 'member', id: org.memberId };
    expect(about(events, literal.id, referenced.id)).toEqual([
      {
        action: 'model-provider.created',
        actor: owner,
        target: { type: 'model-provider', id: literal.id },
        details: { name: 'literal', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'literal' },
      },
      {
        action: 'model-provider.created',
        actor: owner,
        target: { type: 'model-provider', id: referenced.id },
        details: { name: 'referenced', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9', apiKey: 'vault-reference', vaultItemId: item.id },
      },
      { action: 'model-provider.deleted', actor: owner, target: { type: 'model-provider', id: literal.id }, details: { name: 'literal', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' } },
    ]);
    for (const secret of [PROVIDER_KEY, VAULT_SECRET]) expect(text).not.toContain(secret);
  });

  it('[SEC-02] records where Bot tools send and which headers they carry: URLs and header names, never a header value', async () => {
    await t.http().post('/v1/model-providers').set('authorization', as()).send({ name: 'tools', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' }).expect(201);
    const tool = (url: string, headers: Record<string, unknown>) => ({ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url, headers });
    const bot = (
      await t
        .http()
        .post('/v1/bots')
        .set('authorization', as())
        .send({ name: 'Audited tools', model: 'tools/gpt-test', tools: [tool('https://api.example.com/lookup', { 'X-Api-Key': HEADER_SECRET, 'X-Team': 'research' }), { name: 'ask', description: 'Asks', parameters: { type: 'object' } }] })
        .expect(201)
    ).body as { id: string };
    const patch = (tools: unknown[]) => t.http().patch(`/v1/bots/${bot.id}`).set('authorization', as()).send({ tools }).expect(200);
    // Nothing about where it sends changes: no record.
    await patch([tool('https://api.example.com/lookup', { 'X-Api-Key': null, 'X-Team': null })]);
    // The path changes, a value is given again, a header goes and one comes.
    await patch([tool('https://api.example.com/v2/lookup', { 'X-Api-Key': HEADER_REPLACED, 'X-Trace': 'on' })]);
    // The tool goes.
    await patch([]);

    const { events, text } = await audit();
    const owner = { kind: 'member', id: org.memberId };
    const target = { type: 'bot', id: bot.id };
    expect(about(events, bot.id)).toEqual([
      {
        action: 'bot.tools-changed',
        actor: owner,
        target,
        details: { tools: [{ tool: 'lookup', kind: 'http', url: { from: null, to: 'https://api.example.com/lookup' }, headers: { added: ['X-Api-Key', 'X-Team'], removed: [], changed: [] } }] },
      },
      {
        action: 'bot.tools-changed',
        actor: owner,
        target,
        details: {
          tools: [
            {
              tool: 'lookup',
              kind: 'http',
              url: { from: 'https://api.example.com/lookup', to: 'https://api.example.com/v2/lookup' },
              headers: { added: ['X-Trace'], removed: ['X-Team'], changed: ['X-Api-Key'] },
            },
          ],
        },
      },
      {
        action: 'bot.tools-changed',
        actor: owner,
        target,
        details: { tools: [{ tool: 'lookup', kind: 'http', url: { from: 'https://api.example.com/v2/lookup', to: null }, headers: { added: [], removed: ['X-Api-Key', 'X-Trace'], changed: [] } }] },
      },
    ]);
    for (const secret of [HEADER_SECRET, HEADER_REPLACED, 'research']) expect(text).not.toContain(secret);
  });
});
