import { Engine } from '@openbot/engine';
import { Client } from 'pg';
import { bearer } from '../support/chat-fixture';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completeByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import { startTestApp, type TestApp } from '../support/test-app';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';

/**
 * The grant rules clause by clause (GRANT-02, GRANT-05, GRANT-07), on the real app with a real
 * OAuth authorization server and protected MCP server per test (app-oauth.spec.ts has the flows):
 * - GRANT-02: the credential, the call ID that obtained it and the final event commit in one
 *   transaction, and a fault between them leaves none of the three;
 * - GRANT-05: the grant-use table records holders, pending sends and revocations in the
 *   transactions of what they describe, and cleanup decides from it without opening a secret;
 * - GRANT-07: sends and installation (code exchanges and token refreshes alike) wait on the lock
 *   cleanup holds; a saved revocation intent holds new sends back and survives a takeover of its cleanup.
 */
describe('App OAuth grant rules', () => {
  const PUBLIC_URL = 'http://127.0.0.1:8080';
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  async function servers<T>(work: (s: { as: TestAuthorizationServer; rs: ProtectedMcpServer }) => Promise<T>, options: Parameters<typeof startAuthorizationServer>[0] = {}): Promise<T> {
    const as = await startAuthorizationServer(options);
    const rs = await startProtectedMcpServer(as);
    try {
      return await work({ as, rs });
    } finally {
      await rs.close();
      await as.close();
    }
  }

  /** A new connection of the organization's App on `url` (registered on first use). */
  async function connect(secret: string, url: string): Promise<string> {
    const registered = await post(secret, '/v1/apps', { url });
    const appId = registered.status === 201 ? (registered.body as { id: string }).id : (registered.body as { appId: string }).appId;
    const created = await post(secret, `/v1/apps/${appId}/connections`, { owner: 'organization' }).expect(201);
    return (created.body as { id: string }).id;
  }

  /** Starts a sign-in and plays the browser to just before OpenBot's callback: answers the callback's path and query. */
  async function signIn(secret: string, connectionId: string): Promise<string> {
    const res = await post(secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    const run = await new TestBrowser().navigate((res.body as { authorizationUrl: string }).authorizationUrl, (next) => next.href.startsWith(`${PUBLIC_URL}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status}`);
    const stop = new URL(run.stoppedAt);
    return `${stop.pathname}${stop.search}`;
  }

  async function authorized(secret: string, connectionId: string): Promise<void> {
    const done = await completeByLoopback(t, secret, await signIn(secret, connectionId));
    expect({ status: done.status, state: (done.body as { state: string }).state }).toEqual({ status: 200, state: 'ready' });
  }

  /** Polls a condition the server reaches on its own; never the clock as an assertion. */
  async function until<T>(what: string, read: () => Promise<T | null | undefined | false>): Promise<T> {
    for (let i = 0; i < 600; i++) {
      const value = await read();
      if (value !== null && value !== undefined && value !== false) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`never: ${what}`);
  }

  const stateOf = async (executionId: string): Promise<string> =>
    (await t.database.query<{ state: string }>('SELECT state FROM executions WHERE id = $1', [executionId]))[0]!.state;
  const ended = (executionId: string): Promise<string> =>
    until(`${executionId} ended`, async () => {
      const state = await stateOf(executionId);
      return ['completed', 'failed', 'cancelled', 'interrupted'].includes(state) ? state : null;
    });
  const exchangeOf = (connectionId: string): Promise<string> =>
    until('the exchange execution', async () => {
      const [row] = await t.database.query<{ id: string | null }>('SELECT exchange_execution_id AS id FROM app_oauth_authorizations WHERE connection_id = $1 ORDER BY created_at DESC LIMIT 1', [connectionId]);
      return row?.id ?? null;
    });

  describe('[GRANT-02] the credential, its call ID and the final event', () => {
    it('[GRANT-02] commit in one transaction: the grant row with its tokens and call ID, the result marked installed, the holder record and the execution.ended event carry one transaction ID', () =>
      servers(async ({ rs }) => {
        const org = await t.createOrganization('Grant tx');
        const connectionId = await connect(org.secret, rs.url);
        await authorized(org.secret, connectionId);
        const exchangeId = await exchangeOf(connectionId);
        const [grant] = await t.database.query<{ id: string; xmin: string; installed_call_id: string; tokens_record_id: string }>(
          'SELECT id, xmin::text AS xmin, installed_call_id, tokens_record_id FROM app_oauth_grants WHERE connection_id = $1',
          [connectionId],
        );
        const [call] = await t.database.query<{ id: string }>(`SELECT id FROM execution_calls WHERE execution_id = $1 AND status = 'succeeded'`, [exchangeId]);
        expect(grant!.installed_call_id).toBe(call!.id);
        const [result] = await t.database.query<{ xmin: string; tokens_record_id: string }>('SELECT xmin::text AS xmin, tokens_record_id FROM app_oauth_grant_results WHERE call_id = $1', [call!.id]);
        expect(result!.tokens_record_id).toBe(grant!.tokens_record_id);
        const [holder] = await t.database.query<{ xmin: string }>(`SELECT xmin::text AS xmin FROM app_oauth_grant_uses WHERE id = $1 AND kind = 'holder'`, [grant!.id]);
        const [endedEvent] = await t.database.query<{ xmin: string }>(`SELECT xmin::text AS xmin FROM execution_events WHERE execution_id = $1 AND type = 'execution.ended'`, [exchangeId]);
        expect({ result: result!.xmin, holder: holder!.xmin, ended: endedEvent!.xmin }).toEqual({ result: grant!.xmin, holder: grant!.xmin, ended: grant!.xmin });
      }));

    it('[GRANT-02] a fault after the grant row is written and before the end commits leaves none of the three: no grant, no installed call ID, no completed end; the unused pair still goes to cleanup and is revoked', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Grant fault');
        const connectionId = await connect(org.secret, rs.url);
        // The holder record is written after the grant row in the end's transaction: refusing it fails that transaction.
        await t.database.query(`CREATE FUNCTION refuse_grant_holder() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN IF NEW.holder_id = '${connectionId}' AND NEW.kind = 'holder' THEN RAISE EXCEPTION 'fault between grant and final event'; END IF; RETURN NEW; END $$`);
        await t.database.query('CREATE TRIGGER refuse_grant_holder BEFORE INSERT ON app_oauth_grant_uses FOR EACH ROW EXECUTE FUNCTION refuse_grant_holder()');
        try {
          const done = await completeByLoopback(t, org.secret, await signIn(org.secret, connectionId));
          expect(done.status).toBeLessThan(500);
          const exchangeId = await exchangeOf(connectionId);
          expect(await ended(exchangeId)).toBe('failed');
          expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [connectionId])).toEqual([]);
          // GRANT-05: its pending send went with its (failed) end; no holder record came.
          expect(await t.database.query('SELECT kind FROM app_oauth_grant_uses WHERE id = $1 OR holder_id = $2', [exchangeId, connectionId])).toEqual([]);
          const events = await t.database.query<{ type: string }>('SELECT type FROM execution_events WHERE execution_id = $1 ORDER BY seq', [exchangeId]);
          expect(events.filter((e) => e.type === 'execution.ended')).toHaveLength(1);
          const view = await t.http().get(`/v1/executions/${exchangeId}`).set('authorization', bearer(org.secret)).expect(200);
          expect(view.body).toMatchObject({ state: 'failed', category: 'internal', errorId: expect.any(String) });
          expect((await t.http().get(`/v1/connections/${connectionId}`).set('authorization', bearer(org.secret)).expect(200)).body).toMatchObject({ state: 'needs_authorization' });
          // The pair the call obtained was never installed: its result keeps no installed mark, and its cleanup revokes it.
          const [result] = await t.database.query<{ installed: boolean; cleanup_execution_id: string }>(
            `SELECT installed_at IS NOT NULL AS installed, cleanup_execution_id FROM app_oauth_grant_results WHERE source_execution_id = $1 AND kind = 'exchange'`,
            [exchangeId],
          );
          expect(result).toEqual({ installed: false, cleanup_execution_id: expect.any(String) });
          expect(await ended(result!.cleanup_execution_id)).toBe('completed');
          expect(as.revocations).toEqual(['refresh_token']);
        } finally {
          await t.database.query('DROP TRIGGER refuse_grant_holder ON app_oauth_grant_uses');
          await t.database.query('DROP FUNCTION refuse_grant_holder()');
        }
      }));
  });

  /** The registration a connection's sign-ins use. */
  const registrationOf = async (connectionId: string): Promise<string> =>
    (await t.database.query<{ id: string }>('SELECT registration_id AS id FROM app_oauth_authorizations WHERE connection_id = $1 LIMIT 1', [connectionId]))[0]!.id;

  /** Some backend of the app waits for a lock that the transaction of backend `pid` holds. */
  const blockedBy = (pid: number): Promise<boolean> =>
    until(`a backend waiting on a lock of backend ${pid}`, async () => {
      const rows = await t.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, [pid]);
      return rows[0]!.n > 0;
    });

  describe('[GRANT-05] the grant-use table', () => {
    it('[GRANT-05] records a pending send before the code goes out and drops it with the end that records the holder', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Pending send');
        const connectionId = await connect(org.secret, rs.url);
        let release: () => void = () => undefined;
        as.hold('/token', new Promise<void>((resolve) => (release = resolve)));
        try {
          const answer = completeByLoopback(t, org.secret, await signIn(org.secret, connectionId));
          await until('the code exchange at the server', () => Promise.resolve(as.requests.includes('/token')));
          const exchangeId = await exchangeOf(connectionId);
          // While the code is at the server: its send is recorded, for its registration and its lineage (the connection).
          const registrationId = await registrationOf(connectionId);
          expect(await t.database.query('SELECT kind, holder_type, registration_id, lineage_id FROM app_oauth_grant_uses WHERE id = $1', [exchangeId])).toEqual([
            { kind: 'send', holder_type: 'execution', registration_id: registrationId, lineage_id: connectionId },
          ]);
          release();
          expect((await answer).status).toBe(200);
          expect(await ended(exchangeId)).toBe('completed');
          const [grant] = await t.database.query<{ id: string }>('SELECT id FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
          expect(await t.database.query('SELECT id, kind FROM app_oauth_grant_uses WHERE id = ANY($1::uuid[]) ORDER BY kind', [[exchangeId, grant!.id]])).toEqual([{ id: grant!.id, kind: 'holder' }]);
        } finally {
          as.hold('/token', null);
          release();
        }
      }));

    it('[GRANT-05] cleanup decides from the table alone and opens no secret: with the pair it would revoke unreadable, it keeps waiting for the holder of its lineage instead of failing', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('No secret');
        const connectionId = await connect(org.secret, rs.url);
        await authorized(org.secret, connectionId);
        // Signing in again replaces the pair: the old one goes to cleanup, which waits while the connection holds the lineage.
        await authorized(org.secret, connectionId);
        const [replaced] = await t.database.query<{ cleanup_execution_id: string; tokens_record_id: string }>(
          `SELECT cleanup_execution_id, tokens_record_id FROM app_oauth_grant_results WHERE kind = 'replaced' AND lineage_id = $1`,
          [connectionId],
        );
        // The sealed pair becomes unreadable: its purpose is bound into the envelope.
        await t.database.query(`UPDATE sealed_records SET purpose = purpose || '.unreadable' WHERE id = $1`, [replaced!.tokens_record_id]);
        try {
          // Two looks at the table, each on its durable timer, while the pair cannot be opened: still waiting, nothing sent.
          await until('two looks at the grant-use table', async () => {
            const [timers] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_timers WHERE execution_id = $1 AND fired_at IS NOT NULL', [replaced!.cleanup_execution_id]);
            return timers!.n >= 2;
          });
          expect(await stateOf(replaced!.cleanup_execution_id)).toBe('waiting');
          expect(await t.database.query('SELECT 1 FROM error_records WHERE execution_id = $1', [replaced!.cleanup_execution_id])).toEqual([]);
          expect(as.revocations).toEqual([]);
          expect(await t.database.query(`SELECT 1 FROM app_oauth_grant_uses WHERE kind = 'revocation' AND registration_id = $1`, [await registrationOf(connectionId)])).toEqual([]);
        } finally {
          await t.database.query(`UPDATE sealed_records SET purpose = replace(purpose, '.unreadable', '') WHERE id = $1`, [replaced!.tokens_record_id]);
        }
      }));
  });

  describe('[GRANT-07] the shared lock and the revocation intent', () => {
    it('[GRANT-07] a code exchange waits on the lock cleanup takes, both before it sends the code and before it installs the pair', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Shared lock');
        const first = await connect(org.secret, rs.url);
        await authorized(org.secret, first);
        const registrationId = await registrationOf(first);
        const cleanup = new Client({ connectionString: t.database.url });
        await cleanup.connect();
        const cleanupPid = (await cleanup.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        try {
          // 1. Cleanup holds the registration's lock (as its reserve step does): a new sign-in sends no code until it is released.
          const second = await connect(org.secret, rs.url);
          const callback = await signIn(org.secret, second);
          const codesBefore = as.tokenRequests.filter((r) => r.grantType === 'authorization_code').length;
          await cleanup.query('BEGIN');
          await cleanup.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR UPDATE', [registrationId]);
          const answer = completeByLoopback(t, org.secret, callback);
          await blockedBy(cleanupPid);
          expect(as.tokenRequests.filter((r) => r.grantType === 'authorization_code')).toHaveLength(codesBefore);
          await cleanup.query('COMMIT');
          expect((await answer).body).toMatchObject({ state: 'ready' });

          // 2. The code is at the server when cleanup takes the lock: the answer comes, but the pair is saved and installed only after the release.
          const third = await connect(org.secret, rs.url);
          let release: () => void = () => undefined;
          as.hold('/token', new Promise<void>((resolve) => (release = resolve)));
          const thirdCallback = await signIn(org.secret, third);
          const tokenRequestsBefore = as.requests.filter((path) => path === '/token').length;
          const exchanged = completeByLoopback(t, org.secret, thirdCallback);
          await until('the code exchange at the server', () => Promise.resolve(as.requests.filter((path) => path === '/token').length > tokenRequestsBefore));
          await cleanup.query('BEGIN');
          await cleanup.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR UPDATE', [registrationId]);
          release();
          as.hold('/token', null);
          await blockedBy(cleanupPid);
          expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [third])).toEqual([]);
          await cleanup.query('COMMIT');
          expect((await exchanged).body).toMatchObject({ state: 'ready' });
          expect(await t.database.query('SELECT 1 FROM app_oauth_grants WHERE connection_id = $1', [third])).toHaveLength(1);
        } finally {
          await cleanup.query('ROLLBACK').catch(() => undefined);
          await cleanup.end();
        }
      }));

    it('[GRANT-07] a saved revocation intent holds new sends back while its revocation is in flight and after another node takes its cleanup over; they go on once it ends', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Reservation');
        const removedId = await connect(org.secret, rs.url);
        await authorized(org.secret, removedId);
        const registrationId = await registrationOf(removedId);
        let release: () => void = () => undefined;
        as.hold('/token/revocation', new Promise<void>((resolve) => (release = resolve)));
        const t2 = await startTestApp({ database: t.database, masterKey: t.config.masterKey, env: { OPENBOT_PUBLIC_URL: PUBLIC_URL } });
        try {
          const deleted = await t.http().delete(`/v1/connections/${removedId}`).set('authorization', bearer(org.secret)).expect(202);
          expect(await ended((deleted.body as { executionId: string }).executionId)).toBe('completed');
          const [removed] = await t.database.query<{ id: string; cleanup_execution_id: string }>(`SELECT id, cleanup_execution_id FROM app_oauth_grant_results WHERE kind = 'removed' AND lineage_id = $1`, [removedId]);
          const cleanupId = removed!.cleanup_execution_id;
          // The intent is saved, then the revocation is sent (and held at the server).
          await until('the revocation at the server', () => Promise.resolve(as.requests.includes('/token/revocation')));
          const reservation = async (): Promise<unknown[]> => t.database.query('SELECT kind, registration_id FROM app_oauth_grant_uses WHERE id = $1', [removed!.id]);
          expect(await reservation()).toEqual([{ kind: 'revocation', registration_id: registrationId }]);

          // Another node takes the cleanup over (the first one's lease is given up): the intent stays.
          const [before] = await t.database.query<{ generation: number }>('SELECT generation FROM executions WHERE id = $1', [cleanupId]);
          const runner = (t2.app.get(Engine) as unknown as { runner: { onJobs(jobs: ReadonlyArray<{ data: { executionId: string } }>): Promise<void> } }).runner;
          await until('a takeover of the cleanup', async () => {
            await t.database.query(`UPDATE executions SET lease_until = now() - interval '1 second' WHERE id = $1 AND generation = $2`, [cleanupId, before!.generation]);
            await runner.onJobs([{ data: { executionId: cleanupId } }]);
            const [now] = await t.database.query<{ generation: number; owner_node: string | null }>('SELECT generation, owner_node FROM executions WHERE id = $1', [cleanupId]);
            return now!.generation > before!.generation;
          });
          expect(await reservation()).toEqual([{ kind: 'revocation', registration_id: registrationId }]);

          // A new sign-in of the same registration: its exchange looks, finds the intent, and waits on its timer; no code is sent.
          const codesBefore = as.tokenRequests.filter((r) => r.grantType === 'authorization_code').length;
          const next = await connect(org.secret, rs.url);
          const answer = completeByLoopback(t, org.secret, await signIn(org.secret, next));
          const exchangeId = await exchangeOf(next);
          await until('the exchange looked twice', async () => {
            const [timers] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_timers WHERE execution_id = $1 AND fired_at IS NOT NULL', [exchangeId]);
            return timers!.n >= 1;
          });
          expect(as.tokenRequests.filter((r) => r.grantType === 'authorization_code')).toHaveLength(codesBefore);
          expect(await t.database.query('SELECT 1 FROM app_oauth_grant_uses WHERE id = $1', [exchangeId])).toEqual([]);
          expect(await reservation()).toEqual([{ kind: 'revocation', registration_id: registrationId }]);

          // The revocation answers: the cleanup ends, the intent goes, the waiting exchange sends its code and installs.
          release();
          as.hold('/token/revocation', null);
          expect(await ended(cleanupId)).toBe('completed');
          expect(await reservation()).toEqual([]);
          expect(as.revocations.length).toBeGreaterThan(0);
          expect(await ended(exchangeId)).toBe('completed');
          expect(as.tokenRequests.filter((r) => r.grantType === 'authorization_code')).toHaveLength(codesBefore + 1);
          expect((await t.http().get(`/v1/connections/${next}`).set('authorization', bearer(org.secret)).expect(200)).body).toMatchObject({ state: 'ready' });
          await answer;
        } finally {
          as.hold('/token/revocation', null);
          release();
          await t2.close();
        }
      }));

    /** A check of the connection: its App request, refused with a token the resource server saw before, makes the grant refresh. */
    const check = async (secret: string, connectionId: string): Promise<string> =>
      ((await post(secret, `/v1/connections/${connectionId}/check`).expect(202)).body as { executionId: string }).executionId;
    const refreshesAt = (as: TestAuthorizationServer): number => as.tokenRequests.filter((r) => r.grantType === 'refresh_token').length;
    const refreshOf = (connectionId: string): Promise<string> =>
      until('the refresh execution', async () => {
        const [row] = await t.database.query<{ id: string }>(
          `SELECT e.id FROM executions e JOIN app_oauth_grants g ON e.resource_id = g.id::text WHERE e.workflow = 'app.oauth.refresh' AND g.connection_id = $1 ORDER BY e.created_at DESC LIMIT 1`,
          [connectionId],
        );
        return row?.id ?? null;
      });
    const grantOf = async (connectionId: string): Promise<unknown> =>
      (await t.database.query('SELECT version, state, refresh_intent FROM app_oauth_grants WHERE connection_id = $1', [connectionId]))[0];

    it('[GRANT-07] a token refresh is a grant send too: it waits on the lock cleanup takes, both before it sends the refresh token and before it installs the rotated pair', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Refresh lock');
        const connectionId = await connect(org.secret, rs.url);
        await authorized(org.secret, connectionId);
        expect(await ended(await check(org.secret, connectionId))).toBe('completed');
        const registrationId = await registrationOf(connectionId);
        const cleanup = new Client({ connectionString: t.database.url });
        await cleanup.connect();
        const cleanupPid = (await cleanup.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        try {
          // 1. Cleanup holds the registration's lock (as its reserve step does): the refresh sends nothing until it is released.
          rs.refuseTokensSeenSoFar();
          const before = refreshesAt(as);
          const tokenPosts = (): number => as.requests.filter((path) => path === '/token').length;
          const postsBefore = tokenPosts();
          await cleanup.query('BEGIN');
          await cleanup.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR UPDATE', [registrationId]);
          const firstCheck = await check(org.secret, connectionId);
          await refreshOf(connectionId);
          await blockedBy(cleanupPid);
          expect({ posts: tokenPosts(), refreshes: refreshesAt(as) }).toEqual({ posts: postsBefore, refreshes: before });
          expect(await grantOf(connectionId)).toMatchObject({ version: 1, state: 'active' });
          await cleanup.query('COMMIT');
          expect(await ended(firstCheck)).toBe('completed');
          expect(refreshesAt(as)).toBe(before + 1);
          expect(await grantOf(connectionId)).toEqual({ version: 2, state: 'active', refresh_intent: null });

          // 2. The refresh token is at the server when cleanup takes the lock: the answer comes, but the rotated pair is installed only after the release.
          rs.refuseTokensSeenSoFar();
          let release: () => void = () => undefined;
          as.hold('/token', new Promise<void>((resolve) => (release = resolve)));
          const secondCheck = await check(org.secret, connectionId);
          await until('the second refresh at the server', () => Promise.resolve(tokenPosts() > postsBefore + 1));
          await cleanup.query('BEGIN');
          await cleanup.query('SELECT 1 FROM app_oauth_registrations WHERE id = $1 FOR UPDATE', [registrationId]);
          release();
          as.hold('/token', null);
          await blockedBy(cleanupPid);
          expect(await grantOf(connectionId)).toMatchObject({ version: 2, refresh_intent: expect.any(String) });
          await cleanup.query('COMMIT');
          expect(await ended(secondCheck)).toBe('completed');
          expect(await grantOf(connectionId)).toEqual({ version: 3, state: 'active', refresh_intent: null });
          expect(refreshesAt(as)).toBe(before + 2);
        } finally {
          await cleanup.query('ROLLBACK').catch(() => undefined);
          await cleanup.end();
        }
      }));

    it('[GRANT-07] a saved revocation intent holds a token refresh back: the refresh looks on its durable timer and sends no refresh token while the revocation is in flight; it refreshes once the revocation ends', () =>
      servers(async ({ as, rs }) => {
        const org = await t.createOrganization('Refresh reservation');
        const removedId = await connect(org.secret, rs.url);
        await authorized(org.secret, removedId);
        const keptId = await connect(org.secret, rs.url);
        await authorized(org.secret, keptId);
        expect(await ended(await check(org.secret, keptId))).toBe('completed');
        const registrationId = await registrationOf(keptId);
        expect(await registrationOf(removedId)).toBe(registrationId);
        let release: () => void = () => undefined;
        as.hold('/token/revocation', new Promise<void>((resolve) => (release = resolve)));
        try {
          // Removing one connection saves the revocation intent of its pair, then sends the revocation (held at the server).
          const deleted = await t.http().delete(`/v1/connections/${removedId}`).set('authorization', bearer(org.secret)).expect(202);
          expect(await ended((deleted.body as { executionId: string }).executionId)).toBe('completed');
          const [removed] = await t.database.query<{ id: string; cleanup_execution_id: string }>(`SELECT id, cleanup_execution_id FROM app_oauth_grant_results WHERE kind = 'removed' AND lineage_id = $1`, [removedId]);
          await until('the revocation at the server', () => Promise.resolve(as.requests.includes('/token/revocation')));
          const reservation = async (): Promise<unknown[]> => t.database.query('SELECT kind, registration_id FROM app_oauth_grant_uses WHERE id = $1', [removed!.id]);
          expect(await reservation()).toEqual([{ kind: 'revocation', registration_id: registrationId }]);

          // The other connection's token is refused: its refresh looks, finds the intent and waits on its timer; no refresh token is sent.
          rs.refuseTokensSeenSoFar();
          const before = refreshesAt(as);
          const checkId = await check(org.secret, keptId);
          const refreshId = await refreshOf(keptId);
          await until('the refresh looked again', async () => {
            const [timers] = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM execution_timers WHERE execution_id = $1 AND fired_at IS NOT NULL', [refreshId]);
            return timers!.n >= 1;
          });
          expect(refreshesAt(as)).toBe(before);
          expect(await t.database.query('SELECT 1 FROM execution_calls WHERE execution_id = $1', [refreshId])).toEqual([]);
          expect(await grantOf(keptId)).toEqual({ version: 1, state: 'active', refresh_intent: refreshId });
          expect(await reservation()).toEqual([{ kind: 'revocation', registration_id: registrationId }]);

          // The revocation answers: the cleanup ends, the intent goes, the refresh sends its refresh token and installs the rotated pair.
          release();
          as.hold('/token/revocation', null);
          expect(await ended(removed!.cleanup_execution_id)).toBe('completed');
          expect(await reservation()).toEqual([]);
          expect(await ended(refreshId)).toBe('completed');
          expect(await ended(checkId)).toBe('completed');
          expect(refreshesAt(as)).toBe(before + 1);
          expect(await grantOf(keptId)).toEqual({ version: 2, state: 'active', refresh_intent: null });
          expect((await t.http().get(`/v1/connections/${keptId}`).set('authorization', bearer(org.secret)).expect(200)).body).toMatchObject({ state: 'ready' });
        } finally {
          as.hold('/token/revocation', null);
          release();
        }
      }));
  });
});
