import { Forbidden, InvalidInput, isUuid, type MemberCaller } from '@openbot/domain';
import { createHash } from 'node:crypto';
import type { Sql } from '../../../platform/src/database/sql';
import { refusedState } from './app-oauth-failures';

/**
 * How an authorization request's browser leg is bound to the member who asked (decision 066):
 * `browser` (their signed-in OpenBot browser opened the start URL and holds the binding cookie)
 * or `loopback` (a listener on their own machine receives the answer, and they post it with their
 * key). An unbound request is refused at the callback.
 */
export type AuthorizationBinding = 'browser' | 'loopback';

/** The binding cookie of one authorization request: its Path is the registration's callback, so it goes nowhere else. */
export function bindingCookieName(authorizationId: string): string {
  return `openbot_app_oauth_${authorizationId.replace(/-/g, '')}`;
}

export function bindingHash(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * A loopback redirect (RFC 8252 section 7.3): `http://127.0.0.1:<port>/<path>` or
 * `http://[::1]:<port>/<path>`, with an explicit port, no credentials, query or fragment.
 * `localhost` is refused (it may resolve elsewhere). Answers it normalized, or 400 naming `field`.
 */
export function loopbackRedirect(value: string, field: string): string {
  const refuse = (): never => {
    throw new InvalidInput([{ path: field, message: `${field} must be a loopback listener: http://127.0.0.1:<port>/<path> or http://[::1]:<port>/<path>` }]);
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse();
  }
  if (url.protocol !== 'http:' || (url.hostname !== '127.0.0.1' && url.hostname !== '[::1]')) return refuse();
  if (url.port === '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || value.length > 500) return refuse();
  return url.href;
}

/** The request row the binding and completion steps read. */
export interface AuthorizationRequestRow {
  readonly id: string;
  readonly registration_id: string;
  readonly connection_id: string | null;
  readonly developer_test_id: string | null;
  readonly organization_id: string;
  readonly member_id: string;
  readonly binding: AuthorizationBinding | null;
  readonly browser_hash: Buffer | null;
  readonly loopback_redirect: string | null;
  readonly request_record_id: string | null;
  readonly return_to: string | null;
  readonly used: boolean;
  readonly expired: boolean;
}

export const REQUEST_COLUMNS =
  'id, registration_id, connection_id, developer_test_id, organization_id, member_id, binding, browser_hash, loopback_redirect, request_record_id, return_to, used_at IS NOT NULL AS used, expires_at <= now() AS expired';

/**
 * Locks one unused, unexpired request of the caller for binding. Another organization's (or an
 * unknown) request is 404 alike; another member's is 403: only the member who asked binds it.
 */
export async function lockOwnRequest(tx: Sql, caller: MemberCaller, authorizationId: string, notFound: () => Error): Promise<AuthorizationRequestRow> {
  if (!isUuid(authorizationId)) throw notFound();
  const row = await tx.one<AuthorizationRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM app_oauth_authorizations WHERE id = $1 AND organization_id = $2 FOR UPDATE`, [authorizationId, caller.organizationId]);
  if (row === undefined) throw notFound();
  if (row.member_id !== caller.memberId) throw new Forbidden('Only the member who started this authorization may continue it.');
  if (row.used) throw refusedState('the authorization was already used');
  if (row.expired) throw refusedState('the authorization has expired');
  return row;
}

/** Binds a request to a loopback listener of its member, in the caller's transaction (a browser binding it had is dropped). */
export async function bindLoopbackIn(tx: Sql, row: Pick<AuthorizationRequestRow, 'id'>, redirect: string): Promise<void> {
  await tx.count(`UPDATE app_oauth_authorizations SET binding = 'loopback', loopback_redirect = $2, browser_hash = NULL WHERE id = $1`, [row.id, redirect]);
}
