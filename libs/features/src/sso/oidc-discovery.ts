import { readCappedText } from '@openbot/core';

/** The endpoints and abilities of an OpenID provider that sign-in uses (OpenID Connect Discovery §3). */
export interface ProviderMetadata {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly jwksUri: string;
  readonly userinfoEndpoint: string | null;
  /** true when the provider lists S256 in `code_challenge_methods_supported`. */
  readonly pkce: boolean;
  /** true when the provider lists `authorization_response_iss_parameter_supported` (RFC 9207 §3): its callbacks must carry `iss`. */
  readonly issParameter: boolean;
  readonly tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
}

/** The provider's discovery document is missing, unreachable or not usable for sign-in. */
export class DiscoveryFailed extends Error {
  override readonly name = 'DiscoveryFailed';
}

const TIMEOUT_MS = 10_000;

/** Where an issuer publishes its discovery document. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * Reads and checks an issuer's discovery document. `fetchImpl` is the egress-checked fetch, so
 * the provider's host passes the egress policy at every login, not only when it was configured.
 * The document must name exactly the configured issuer (Discovery §4.3), or a document served
 * for one issuer could send logins to another. At most `limitBytes` of the document are read.
 */
export async function discoverProvider(issuer: string, fetchImpl: typeof fetch, limitBytes: number): Promise<ProviderMetadata> {
  let response: Response;
  try {
    response = await fetchImpl(discoveryUrl(issuer), { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new DiscoveryFailed(`discovery of ${issuer} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (response.status !== 200) throw new DiscoveryFailed(`discovery of ${issuer} answered HTTP ${response.status}`);
  let text: string;
  try {
    text = await readCappedText(response, limitBytes, `the discovery document of ${issuer}`);
  } catch (error) {
    throw new DiscoveryFailed(`discovery of ${issuer} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let document: Record<string, unknown>;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    document = parsed as Record<string, unknown>;
  } catch (error) {
    throw new DiscoveryFailed(`discovery document of ${issuer} is not a JSON object`, { cause: error });
  }
  if (document.issuer !== issuer) throw new DiscoveryFailed(`discovery document names issuer ${JSON.stringify(document.issuer)}, not ${issuer}`);
  const responseTypes = stringList(document.response_types_supported);
  if (responseTypes !== null && !responseTypes.includes('code')) throw new DiscoveryFailed(`${issuer} does not support the authorization code flow`);
  const authMethods = stringList(document.token_endpoint_auth_methods_supported) ?? ['client_secret_basic'];
  const tokenEndpointAuthMethod = authMethods.includes('client_secret_basic')
    ? 'client_secret_basic'
    : authMethods.includes('client_secret_post')
      ? 'client_secret_post'
      : null;
  if (tokenEndpointAuthMethod === null) throw new DiscoveryFailed(`${issuer} supports neither client_secret_basic nor client_secret_post`);
  return {
    issuer,
    authorizationEndpoint: endpoint(document, 'authorization_endpoint', issuer),
    tokenEndpoint: endpoint(document, 'token_endpoint', issuer),
    jwksUri: endpoint(document, 'jwks_uri', issuer),
    userinfoEndpoint: document.userinfo_endpoint === undefined ? null : endpoint(document, 'userinfo_endpoint', issuer),
    pkce: (stringList(document.code_challenge_methods_supported) ?? []).includes('S256'),
    issParameter: document.authorization_response_iss_parameter_supported === true,
    tokenEndpointAuthMethod,
  };
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
}

function endpoint(document: Record<string, unknown>, field: string, issuer: string): string {
  const value = document[field];
  if (typeof value !== 'string') throw new DiscoveryFailed(`discovery document of ${issuer} has no ${field}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DiscoveryFailed(`${field} of ${issuer} is not a URL`);
  }
  // An https issuer never downgrades its endpoints to plain http (the token and keys travel there).
  const allowed = issuer.startsWith('https:') ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol)) throw new DiscoveryFailed(`${field} of ${issuer} must use ${allowed.join(' or ')}`);
  return value;
}
