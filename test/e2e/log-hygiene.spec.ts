import type { SealedRecordId } from '@openbot/domain';
import { TurnHooks } from '@openbot/features';
import { SealedRecords } from '@openbot/platform';
import { createServer, type AddressInfo } from 'node:net';
import { FakeOpenAiServer, textReply } from '../fakes/fake-openai-server';
import { createChatFixture, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { startOidcProvider, TestBrowser, type TestIdentityProvider } from '../support/oidc-provider';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * What the ordinary log must never hold (ERR-02): the SSO callback's `code` and `state` (the
 * request log writes paths, not queries) and a Turn plugin's failure cause (sealed; the log names
 * its error ID and category). The app's real pino output is captured: it is this file's first
 * app, so nestjs-pino writes to its destination (see test/support/test-app.ts).
 */

const ALICE = { sub: 'alice-logs', email: 'alice@example.com', email_verified: true, name: 'Alice' };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('log hygiene', () => {
  let t: TestApp;
  let idp: TestIdentityProvider;
  let appBase: string;

  beforeAll(async () => {
    const port = await freePort();
    appBase = `http://127.0.0.1:${port}`;
    idp = await startOidcProvider({ accounts: [ALICE] });
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: appBase } });
    await t.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const lines = (): Array<Record<string, unknown>> => t.logs.map((line) => JSON.parse(line) as Record<string, unknown>);

  it('[ERR-02] the SSO callback’s code and state never reach the log; the request line names the path only', async () => {
    const owner = await t.createOrganization('Logs Inc');
    idp.registerRedirectUri(`${appBase}/v1/sso/${owner.organizationId}/callback`);
    await t
      .http()
      .put('/v1/sso')
      .set('authorization', `Bearer ${owner.secret}`)
      .send({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, allowedDomains: ['example.com'], defaultRole: 'member' })
      .expect(200);
    idp.signInAs(ALICE.sub);
    const browser = new TestBrowser();
    await browser.navigate(`${appBase}/v1/sso/${owner.organizationId}/login?returnTo=%2Fv1%2Fme`, (next) => next.origin === appBase && !next.pathname.startsWith('/v1/sso/'));
    // The hop that brought the browser back with the code (whatever the callback's path).
    const callback = browser.hops.map((hop) => new URL(hop.url)).find((url) => url.origin === appBase && url.searchParams.has('code'));
    expect(callback).toBeDefined();
    const code = callback!.searchParams.get('code')!;
    const state = callback!.searchParams.get('state')!;
    expect(code.length).toBeGreaterThan(10);
    expect(state.length).toBeGreaterThan(10);
    expect(browser.hops.find((hop) => hop.url === callback!.href)?.status).toBe(302);

    const all = t.logs.join('\n');
    expect(all).not.toContain(code);
    expect(all).not.toContain(state);
    expect(all).not.toContain(encodeURIComponent(code));
    expect(all).not.toContain(encodeURIComponent(state));
    // The request log does have the callback's line: its path, without its query.
    const logged = lines().filter((line) => (line.req as { url?: string } | undefined)?.url === callback!.pathname);
    expect(logged.length).toBeGreaterThan(0);
  });

  it('[ERR-02] a failing Turn plugin is logged as its error ID and category; its cause is only sealed', async () => {
    const secret = `plugin-private-${Date.now().toString(36)}`;
    t.app.get(TurnHooks).register({
      name: 'leaky',
      points: ['model.completed'],
      run: () => Promise.reject(new Error(`could not reach ${secret}`, { cause: new Error(`inner ${secret}`) })),
    });
    const fake = await FakeOpenAiServer.start();
    try {
      const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
      fake.enqueue(textReply(['Hello'], [3, 1]));
      const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
      expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });

      const records = await t.database.query<{ id: string; category: string; cause_id: string }>(
        `SELECT id, category, cause_id FROM error_records WHERE execution_id = $1 AND origin = 'turn plugin leaky at model.completed'`,
        [turn.executionId],
      );
      expect(records).toHaveLength(1);
      const [record] = records;
      expect(record!.category).toBe('internal');
      const opened = await t.app.get(SealedRecords).get(record!.cause_id as SealedRecordId);
      expect(JSON.stringify(opened!.value)).toContain(`could not reach ${secret}`);

      const line = lines().find((l) => l.errorId === record!.id);
      expect(line).toMatchObject({ category: 'internal', origin: 'turn plugin leaky at model.completed', executionId: turn.executionId, msg: 'turn plugin failed' });
      expect(t.logs.join('\n')).not.toContain(secret);
    } finally {
      await fake.close();
    }
  });
});
