import { isUuid } from '@openbot/domain';

/** An OAuth client the operator registered at an authorization server beforehand (App OAuth, decision 038). */
export interface PreRegisteredOAuthClient {
  /** The registration ID the operator picked: its redirect URI is `<public URL>/v1/oauth/{id}/callback`. */
  readonly id: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string | null;
  /** `client_secret_basic` (default) or `client_secret_post`. */
  readonly tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post';
}

/**
 * `OPENBOT_APP_OAUTH_CLIENTS`: a JSON array of `{ id, issuer, clientId, clientSecret?,
 * tokenEndpointAuthMethod? }`. A pre-registered client comes first in the registration order,
 * before dynamic registration. Answers the clients, or the reason the value is refused.
 */
export function parsePreRegisteredClients(value: string | undefined): { clients: PreRegisteredOAuthClient[] } | { invalid: string } {
  if (value === undefined || value.trim() === '') return { clients: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return { invalid: 'is not JSON (expected [{"id","issuer","clientId","clientSecret"}])' };
  }
  if (!Array.isArray(parsed)) return { invalid: 'must be a JSON array' };
  const clients: PreRegisteredOAuthClient[] = [];
  for (const [index, entry] of parsed.entries()) {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof e.id !== 'string' || !isUuid(e.id)) return { invalid: `entry ${index}: id must be a UUID (it names the callback)` };
    if (typeof e.issuer !== 'string' || !/^https?:\/\//.test(e.issuer)) return { invalid: `entry ${index}: issuer must be an http(s) URL` };
    if (typeof e.clientId !== 'string' || e.clientId === '') return { invalid: `entry ${index}: clientId is required` };
    if (e.clientSecret !== undefined && typeof e.clientSecret !== 'string') return { invalid: `entry ${index}: clientSecret must be a string` };
    const method = e.tokenEndpointAuthMethod ?? 'client_secret_basic';
    if (method !== 'client_secret_basic' && method !== 'client_secret_post') return { invalid: `entry ${index}: tokenEndpointAuthMethod must be client_secret_basic or client_secret_post` };
    clients.push({ id: e.id.toLowerCase(), issuer: e.issuer, clientId: e.clientId, clientSecret: typeof e.clientSecret === 'string' ? e.clientSecret : null, tokenEndpointAuthMethod: method });
  }
  return { clients };
}
