import { newId } from '@openbot/domain';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../fakes/mcp-protected-server';
import { expectDeclared } from '../support/api-assertions';
import { bearer } from '../support/chat-fixture';
import { startAuthorizationServer, type TestAuthorizationServer } from '../support/oauth-authorization-server';
import { TestBrowser } from '../support/oidc-provider';
import { completedByLoopback, LOOPBACK_LISTENER } from '../support/app-oauth-sign-in';
import { startTestApp, type TestApp } from '../support/test-app';
import { startTlsFront, TLS_FIXTURE, type TlsFront } from '../support/tls-front';

/**
 * App OAuth registration by Client ID Metadata Document (decision 043): OpenBot sits behind an
 * https front (the test TLS fixture, as a TLS-terminating proxy in production) and its public URL
 * is that front. The authorization server is oidc-provider with its CIMD feature: it advertises
 * `client_id_metadata_document_supported`, and when it first sees OpenBot's https `client_id` it
 * fetches the document from OpenBot's route over real HTTPS and checks it (client_id equal to the
 * URL, no shared-secret method, the redirect URI). Registration order: a pre-registered client,
 * then a metadata document, then dynamic registration.
 */
describe('App OAuth: Client ID Metadata Documents', () => {
  let front: TlsFront;
  let t: TestApp;
  let cimd: TestAuthorizationServer;
  let cimdRs: ProtectedMcpServer;
  /** A CIMD-capable server that also has a client pre-registered for OpenBot. */
  let pre: TestAuthorizationServer;
  let preRs: ProtectedMcpServer;
  const preRegistrationId = newId();
  const ca = readFileSync(join(TLS_FIXTURE, 'localhost-cert.pem'), 'utf8');

  beforeAll(async () => {
    front = await startTlsFront();
    cimd = await startAuthorizationServer({ metadataDocuments: { ca } });
    cimdRs = await startProtectedMcpServer(cimd);
    pre = await startAuthorizationServer({
      metadataDocuments: { ca },
      clients: [{ clientId: 'openbot-pre', clientSecret: 'pre-registered-secret-0123456789', redirectUris: [`${front.url}/v1/oauth/${preRegistrationId}/callback`] }],
    });
    preRs = await startProtectedMcpServer(pre);
    const clients = JSON.stringify([{ id: preRegistrationId, issuer: pre.issuer, clientId: 'openbot-pre', clientSecret: 'pre-registered-secret-0123456789' }]);
    t = await startTestApp({ env: { OPENBOT_PUBLIC_URL: front.url, OPENBOT_APP_OAUTH_CLIENTS: clients } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    front.forwardTo(await t.app.getUrl());
  });
  afterAll(async () => {
    await preRs?.close();
    await pre?.close();
    await cimdRs?.close();
    await cimd?.close();
    await t?.close();
    await front?.close();
  });

  const post = (secret: string, path: string, body: unknown = {}) => t.http().post(path).set('authorization', bearer(secret)).send(body as object);

  async function authorizationUrl(secret: string, serverUrl: string): Promise<{ url: URL; connectionId: string; secret: string }> {
    const app = (await post(secret, '/v1/apps', { url: serverUrl }).expect(201)).body as { id: string };
    const connectionId = ((await post(secret, `/v1/apps/${app.id}/connections`).expect(201)).body as { id: string }).id;
    const res = await post(secret, `/v1/connections/${connectionId}/authorize`, { loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
    return { url: new URL((res.body as { authorizationUrl: string }).authorizationUrl), connectionId, secret };
  }

  /** Plays the browser up to OpenBot's callback, which relays to the member's listener; the member posts the answer with their key. */
  async function signIn(url: URL, secret: string): Promise<unknown> {
    const run = await new TestBrowser().navigate(url.href, (next) => next.href.startsWith(`${front.url}/`));
    if (run.stoppedAt === null) throw new Error(`the browser did not reach the callback: ${run.response?.status} ${await run.response?.text()}`);
    const stop = new URL(run.stoppedAt);
    return (await completedByLoopback(t, secret, `${stop.pathname}${stop.search}`)).body;
  }

  it('the server advertises CIMD and the public URL is https: the client_id is OpenBot’s document URL; the server fetches the document over HTTPS, no dynamic registration is made, and the grant works', async () => {
    const org = await t.createOrganization('Cimd');
    const { url, connectionId } = await authorizationUrl(org.secret, cimdRs.url);
    const clientId = url.searchParams.get('client_id')!;
    const match = new RegExp(`^${front.url}/v1/oauth/([0-9a-f-]{36})/client-metadata\\.json$`).exec(clientId);
    expect(match).not.toBeNull();
    const registrationId = match![1]!;
    expect(url.searchParams.get('redirect_uri')).toBe(`${front.url}/v1/oauth/${registrationId}/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    expect(await signIn(url, org.secret)).toMatchObject({ connectionId, state: 'ready', reason: null });
    // The authorization server fetched the document itself, through the https front, and read what the route serves.
    expect(front.requests).toContain(`GET /v1/oauth/${registrationId}/client-metadata.json`);
    expect(cimd.metadataDocumentFetches).toEqual([
      {
        url: clientId,
        status: 200,
        document: {
          client_id: clientId,
          client_name: 'OpenBot',
          client_uri: front.url,
          redirect_uris: [`${front.url}/v1/oauth/${registrationId}/callback`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'web',
        },
      },
    ]);
    expect(cimd.requests.some((path) => path.startsWith('/reg'))).toBe(false);
    const rows = await t.database.query<{ method: string; client_id: string }>('SELECT method, client_id FROM app_oauth_registrations WHERE issuer = $1', [cimd.issuer]);
    expect(rows).toEqual([{ method: 'metadata_document', client_id: clientId }]);
    // The token the connection now uses was issued to that client, for the resource (RFC 8707).
    expect(cimd.tokenRequests.filter((r) => r.grantType === 'authorization_code')).toEqual([{ grantType: 'authorization_code', resource: cimdRs.url }]);
    const tools = await t.http().get(`/v1/connections/${connectionId}/tools`).set('authorization', bearer(org.secret)).expect(200);
    expect((tools.body as { data: Array<{ name: string }> }).data.map((tool) => tool.name)).toEqual(['whoami']);
    const token = await cimd.findAccessToken(cimdRs.accepted.at(-1)!);
    expect(token).toMatchObject({ clientId, aud: cimdRs.url });

    // The route is public, JSON, and cacheable; the document never changes for the registration.
    const served = await t.http().get(`/v1/oauth/${registrationId}/client-metadata.json`).expect(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(served.headers['cache-control']).toBe('public, max-age=3600');
    expect(served.body).toEqual(cimd.metadataDocumentFetches[0]!.document);

    // A second connection to the same issuer reuses the registration: one per issuer.
    const again = await authorizationUrl((await t.createOrganization('Cimd2')).secret, cimdRs.url);
    expect(again.url.searchParams.get('client_id')).toBe(clientId);
  });

  it('two organizations authorizing at once at a new issuer make one metadata-document registration, and both use it', async () => {
    const own = await startAuthorizationServer({ metadataDocuments: { ca } });
    const ownRs = await startProtectedMcpServer(own);
    try {
      const [a, b] = await Promise.all([t.createOrganization('RaceA'), t.createOrganization('RaceB')]);
      const [first, second] = await Promise.all([authorizationUrl(a.secret, ownRs.url), authorizationUrl(b.secret, ownRs.url)]);
      expect(second.url.searchParams.get('client_id')).toBe(first.url.searchParams.get('client_id'));
      const rows = await t.database.query<{ n: number }>('SELECT count(*)::int AS n FROM app_oauth_registrations WHERE issuer = $1', [own.issuer]);
      expect(rows).toEqual([{ n: 1 }]);
      expect(await signIn(second.url, second.secret)).toMatchObject({ connectionId: second.connectionId, state: 'ready' });
    } finally {
      await ownRs.close();
      await own.close();
    }
  });

  it('registration order: a client pre-registered for the issuer comes before the metadata document the server would accept', async () => {
    const org = await t.createOrganization('PreFirst');
    const { url, connectionId } = await authorizationUrl(org.secret, preRs.url);
    expect(url.searchParams.get('client_id')).toBe('openbot-pre');
    expect(url.searchParams.get('redirect_uri')).toBe(`${front.url}/v1/oauth/${preRegistrationId}/callback`);
    expect(await signIn(url, org.secret)).toMatchObject({ connectionId, state: 'ready' });
    expect(pre.metadataDocumentFetches).toEqual([]);
    expect(pre.requests.some((path) => path.startsWith('/reg'))).toBe(false);
    // A pre-registered (or dynamic) registration has no document.
    expectDeclared(await t.http().get(`/v1/oauth/${preRegistrationId}/client-metadata.json`), 404, 'OAuthRegistrationNotFound');
    expectDeclared(await t.http().get(`/v1/oauth/${newId()}/client-metadata.json`), 404, 'OAuthRegistrationNotFound');
    expectDeclared(await t.http().get('/v1/oauth/not-a-uuid/client-metadata.json'), 404, 'OAuthRegistrationNotFound');
  });

  it.each([
    ['over a plain http public URL OpenBot cannot serve a document', { OPENBOT_PUBLIC_URL: 'http://127.0.0.1:8080' }],
    ['with OPENBOT_APP_OAUTH_METADATA_DOCUMENTS=false (a server that cannot reach the public URL)', { OPENBOT_APP_OAUTH_METADATA_DOCUMENTS: 'false' }],
  ])('registration order: %s, so it registers dynamically at a CIMD-capable server', async (_case, env) => {
    const node = await startTestApp({ database: t.database, masterKey: t.config.masterKey, env: { OPENBOT_PUBLIC_URL: front.url, ...env } });
    const own = await startAuthorizationServer({ metadataDocuments: { ca } });
    const ownRs = await startProtectedMcpServer(own);
    try {
      const org = await node.createOrganization('HttpPublicUrl');
      const app = (await node.http().post('/v1/apps').set('authorization', bearer(org.secret)).send({ url: ownRs.url }).expect(201)).body as { id: string };
      const connection = (await node.http().post(`/v1/apps/${app.id}/connections`).set('authorization', bearer(org.secret)).send({}).expect(201)).body as { id: string };
      const res = await node.http().post(`/v1/connections/${connection.id}/authorize`).set('authorization', bearer(org.secret)).send({ loopbackRedirect: LOOPBACK_LISTENER }).expect(200);
      const url = new URL((res.body as { authorizationUrl: string }).authorizationUrl);
      expect(url.searchParams.get('client_id')).not.toMatch(/^https?:/);
      expect(own.requests.some((path) => path.startsWith('/reg'))).toBe(true);
      const rows = await t.database.query<{ method: string }>('SELECT method FROM app_oauth_registrations WHERE issuer = $1', [own.issuer]);
      expect(rows).toEqual([{ method: 'dynamic' }]);
    } finally {
      await ownRs.close();
      await own.close();
      await node.close();
    }
  });
});
