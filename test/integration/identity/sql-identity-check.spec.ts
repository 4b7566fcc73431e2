import {
  effectivePermissions,
  identityForMember,
  identityForService,
  newId,
  type ApiKeyId,
  type ExecutionIdentity,
  type MemberCaller,
  type MemberId,
  type OrganizationId,
} from '@openbot/domain';
import type { Json } from '@openbot/engine';
import { randomBytes } from 'node:crypto';
import { Pool, type QueryConfig } from 'pg';
import { SqlIdentityCheck } from '../../../libs/platform/src/identity/sql-identity-check';
import { createTestDatabase, type TestDatabase } from '../../support/test-database';

/**
 * The product's identity check (IDN-06, IDN-10) against a real migrated database: owner, actor and
 * token are each checked as they are now, in one query, with nothing remembered between checks.
 */
describe('SqlIdentityCheck', () => {
  let db: TestDatabase;
  let pool: Pool;
  let queries: number;
  let identityCheck: SqlIdentityCheck;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 4 });
    // Counts the statements each check sends.
    const counting = {
      query: (config: QueryConfig) => {
        queries += 1;
        return pool.query(config);
      },
    } as unknown as Pool;
    identityCheck = new SqlIdentityCheck(counting);
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const check = async (identity: ExecutionIdentity | Json): Promise<unknown> => {
    queries = 0;
    const verdict = await identityCheck.check(identity as Json);
    expect(queries).toBeLessThanOrEqual(1);
    return verdict;
  };

  async function organization(): Promise<string> {
    const id = newId();
    await db.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, `Org ${id.slice(-6)}`]);
    return id;
  }

  async function memberWithKey(organizationId: string, key: { expiresAt?: Date | null } = {}): Promise<MemberCaller> {
    const memberId = newId<MemberId>();
    await db.query(`INSERT INTO members (id, organization_id, role) VALUES ($1, $2, 'member')`, [memberId, organizationId]);
    const apiKeyId = newId<ApiKeyId>();
    await db.query('INSERT INTO api_keys (id, organization_id, member_id, name, secret_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
      apiKeyId,
      organizationId,
      memberId,
      'k',
      randomBytes(32),
      key.expiresAt ?? null,
    ]);
    return { kind: 'member', organizationId: organizationId as OrganizationId, memberId, role: 'member', apiKeyId, sessionId: null, permissions: effectivePermissions('member', null) };
  }

  it('[IDN-06] a member working with an API key: valid until the key is revoked, then invalid at the very next check (nothing cached)', async () => {
    const caller = await memberWithKey(await organization());
    const identity = identityForMember(caller, { botId: newId() });
    expect(await check(identity)).toBe('valid');
    expect(await check(identity)).toBe('valid');
    await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [caller.apiKeyId]);
    expect(await check(identity)).toEqual({ invalid: 'the API key was revoked or expired' });
  });

  it('[IDN-06] an expired key, a key of another member and a key of another organization are invalid', async () => {
    const org = await organization();
    const expired = await memberWithKey(org, { expiresAt: new Date(Date.now() - 1000) });
    expect(await check(identityForMember(expired))).toEqual({ invalid: 'the API key was revoked or expired' });
    const future = await memberWithKey(org, { expiresAt: new Date(Date.now() + 60_000) });
    expect(await check(identityForMember(future))).toBe('valid');
    const other = await memberWithKey(org);
    expect(await check(identityForMember({ ...future, apiKeyId: other.apiKeyId }))).toEqual({ invalid: 'the API key was revoked or expired' });
    const foreign = await memberWithKey(await organization());
    // The member of another organization is not a member of this owner at all.
    expect(await check(identityForMember({ ...foreign, organizationId: org as OrganizationId }))).toEqual({ invalid: 'the member was removed' });
  });

  it('[IDN-06] a removed member is invalid whatever its token; a deleted organization is invalid', async () => {
    const org = await organization();
    const caller = await memberWithKey(org);
    const withoutToken = identityForMember({ ...caller, apiKeyId: null });
    expect(await check(withoutToken)).toBe('valid');
    await db.query('UPDATE members SET removed_at = now() WHERE id = $1', [caller.memberId]);
    expect(await check(identityForMember(caller))).toEqual({ invalid: 'the member was removed' });
    expect(await check(withoutToken)).toEqual({ invalid: 'the member was removed' });

    const gone = await organization();
    const goneCaller = await memberWithKey(gone);
    expect(await check(identityForMember(goneCaller))).toBe('valid');
    await db.query('DELETE FROM organizations WHERE id = $1', [gone]);
    expect(await check(identityForMember(goneCaller))).toEqual({ invalid: 'the organization no longer exists' });
  });

  it('[IDN-06] a session is checked by its own row when SSO has one, and fails closed where no session can exist', async () => {
    const org = await organization();
    const caller = await memberWithKey(org);
    const sessionId = newId();
    const identity = identityForMember({ ...caller, apiKeyId: null, sessionId });
    const [{ exists }] = await db.query<{ exists: boolean }>(`SELECT to_regclass('public.sessions') IS NOT NULL AS exists`);
    if (!exists) {
      expect(await check(identity)).toEqual({ invalid: 'sessions cannot be checked' });
      return;
    }
    expect(await check(identity)).toEqual({ invalid: 'the session ended' });
    await db.query(
      `INSERT INTO sessions (id, organization_id, member_id, token_hash, csrf_token, expires_at) VALUES ($1, $2, $3, $4, 'csrf', now() + interval '1 hour')`,
      [sessionId, org, caller.memberId, randomBytes(32)],
    );
    expect(await check(identity)).toBe('valid');
    await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [sessionId]);
    expect(await check(identity)).toEqual({ invalid: 'the session ended' });
  });

  it('[IDN-10] each service has its own current check: platform and organization services, disabled or of another owner', async () => {
    const platformService = newId();
    await db.query('INSERT INTO services (id, organization_id, name) VALUES ($1, NULL, $2)', [platformService, 'maintenance']);
    const platform = identityForService({ id: platformService, organizationId: null });
    expect(await check(platform)).toBe('valid');

    const org = await organization();
    const orgService = newId();
    await db.query('INSERT INTO services (id, organization_id, name) VALUES ($1, $2, $3)', [orgService, org, 'intake']);
    const owned = identityForService({ id: orgService, organizationId: org });
    expect(await check(owned)).toBe('valid');
    // A service claimed for another owner than its own is not valid there.
    expect(await check(identityForService({ id: orgService, organizationId: null }))).toEqual({ invalid: 'the service is disabled or gone' });
    expect(await check(identityForService({ id: platformService, organizationId: org }))).toEqual({ invalid: 'the service is disabled or gone' });

    await db.query('UPDATE services SET disabled_at = now() WHERE id = $1', [orgService]);
    expect(await check(owned)).toEqual({ invalid: 'the service is disabled or gone' });
    expect(await check(platform)).toBe('valid');
  });

  it('[IDN-04] a stored identity that is malformed or mixes kinds is invalid, never repaired', async () => {
    const caller = await memberWithKey(await organization());
    const identity = identityForMember(caller);
    expect(await check({ ...identity, actor: { kind: 'member', id: 'ob_key_abc' } } as unknown as Json)).toMatchObject({ invalid: expect.stringMatching(/malformed/) });
    expect(await check(null)).toMatchObject({ invalid: expect.stringMatching(/malformed/) });
    // A member acting with a service credential, or a service with an API key.
    expect(await check({ ...identity, token: { kind: 'service', id: caller.memberId } } as unknown as Json)).toMatchObject({ invalid: expect.any(String) });
    const service = identityForService({ id: newId(), organizationId: caller.organizationId });
    expect(await check({ ...service, token: { kind: 'api-key', id: caller.apiKeyId } } as unknown as Json)).toMatchObject({ invalid: expect.any(String) });
  });

  it('[IDN-02] derive: a child identity keeps every part and limit of its parent and names its source', () => {
    const parent = identityForService({ id: newId(), organizationId: null }, { permissions: ['chats.read'] });
    const source = newId();
    expect(identityCheck.derive(parent as unknown as Json, source)).toEqual({ ...parent, sourceExecutionId: source });
    // An unreadable parent is handed on unchanged (the child's own check then refuses it).
    expect(identityCheck.derive({ broken: true }, source)).toEqual({ broken: true });
  });
});
