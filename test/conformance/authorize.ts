import {
  authorizationRequest,
  discoverAuthorization,
  exchangeCode,
  metadataDocumentClient,
  OAuthFailure,
  registerDynamicClient,
  registrationWay,
  scopeUnion,
  type BearerChallenge,
  type Fetch,
  type OAuthClient,
  type RegistrationWay,
  type TokenSet,
} from '@openbot/protocol';
import { randomBytes } from 'node:crypto';

/** What the conformance client knows before it starts: a pre-registered client (scenario context), and its CIMD URL. */
export interface ClientSetup {
  readonly fetch: Fetch;
  readonly serverUrl: string;
  /** Where redirects would land: the callbacks are built from it as OpenBot builds them. Never requested. */
  readonly publicUrl: string;
  readonly preRegistered: { readonly clientId: string; readonly clientSecret: string } | null;
  /** The URL of the Client ID Metadata Document to use as `client_id` when the server supports CIMD. */
  readonly metadataDocumentUrl: string;
  readonly log: (line: string) => void;
}

/** Registrations made in this run, by issuer (OpenBot keeps one per issuer). */
const registrations = new Map<string, { readonly way: RegistrationWay; readonly client: OAuthClient; readonly redirectUri: string }>();

/**
 * One authorization, step by step with OpenBot's own OAuth functions (libs/protocol/src/oauth),
 * the ones `app.oauth.prepare`, `AuthorizeConnection` and `app.oauth.exchange` call: discovery
 * from the challenge (RFC 9728, RFC 8414, the resource check, PKCE S256 required), the
 * registration order (pre-registered → Client ID Metadata Document → dynamic), the authorization
 * URL (PKCE S256, state, RFC 8707 resource, the scope with any step-up scope), the browser's
 * visit (the scenario's server approves at once and redirects: the redirect is read, not
 * followed), the state check, and the code exchange with the `iss` check (RFC 9207).
 */
export async function authorize(setup: ClientSetup, challenge: BearerChallenge, stepUpScope: string | null): Promise<TokenSet> {
  const discovered = await discoverAuthorization(setup.fetch, setup.serverUrl, challenge);
  const issuer = discovered.metadata.issuer;
  let registration = registrations.get(issuer);
  if (registration === undefined) {
    const registrationId = randomBytes(16).toString('hex');
    const redirectUri = `${setup.publicUrl}/v1/oauth/${registrationId}/callback`;
    const way = registrationWay(discovered.metadata, { preRegistered: setup.preRegistered !== null, metadataDocumentUrl: setup.metadataDocumentUrl });
    const client =
      way === 'pre_registered'
        ? { client_id: setup.preRegistered!.clientId, client_secret: setup.preRegistered!.clientSecret, token_endpoint_auth_method: 'client_secret_basic' }
        : way === 'metadata_document'
          ? metadataDocumentClient(setup.metadataDocumentUrl)
          : await registerDynamicClient(setup.fetch, discovered.metadata, { redirectUri, clientName: 'OpenBot', scope: null });
    registration = { way, client, redirectUri };
    registrations.set(issuer, registration);
  }
  setup.log(`registration ${registration.way} at ${issuer}: client_id ${registration.client.client_id}`);

  const state = randomBytes(32).toString('base64url');
  const scope = scopeUnion(discovered.scope, stepUpScope);
  const request = await authorizationRequest(discovered.metadata, registration.client, { redirectUri: registration.redirectUri, state, resource: discovered.resource, scope });
  setup.log(`authorization request: scope ${scope ?? '(none)'}, resource ${discovered.resource}`);

  const visit = await setup.fetch(request.url, { redirect: 'manual' });
  await visit.body?.cancel().catch(() => undefined);
  const location = visit.headers.get('location');
  if (visit.status < 300 || visit.status >= 400 || location === null) throw new OAuthFailure('rejected', `the authorization endpoint answered HTTP ${visit.status} without a redirect`);
  const back = new URL(location, request.url);
  if (`${back.origin}${back.pathname}` !== registration.redirectUri) throw new OAuthFailure('rejected', 'the authorization server redirected elsewhere than the registration’s callback');
  const error = back.searchParams.get('error');
  if (error !== null) throw new OAuthFailure('rejected', `the authorization server did not authorize (${error})`);
  // What the callback checks first: the state is the one issued for this request.
  if (back.searchParams.get('state') !== state) throw new OAuthFailure('rejected', 'the authorization response carries another state');
  const code = back.searchParams.get('code');
  if (code === null) throw new OAuthFailure('rejected', 'the authorization response carries no code');

  return exchangeCode(setup.fetch, discovered.metadata, registration.client, {
    code,
    iss: back.searchParams.get('iss'),
    codeVerifier: request.codeVerifier,
    redirectUri: registration.redirectUri,
    resource: discovered.resource,
    now: Date.now(),
  });
}
