import { newId } from '@openbot/domain';
import type { Response } from 'supertest';
import { hashToken, randomToken } from '../../libs/features/src/sso/session-tokens';
import { bearer } from './chat-fixture';
import type { TestApp } from './test-app';

/**
 * App OAuth sign-ins as a member who works with API keys does them (decision 066): the
 * authorization is bound to a loopback listener on the member's machine; OpenBot's callback
 * relays the authorization server's answer there, and the member posts it with their key. The
 * listener is never contacted here: the test reads the relay's Location, as the listener would.
 */
export const LOOPBACK_LISTENER = 'http://127.0.0.1:47913/openbot-callback';

/** The callback (path and query, as the browser reached it) relays to the listener: answers what the listener would receive. */
export async function relayedToListener(node: TestApp, callback: string): Promise<{ code?: string; state?: string; iss?: string; error?: string }> {
  const relay = await node.http().get(callback);
  if (relay.status !== 303) throw new Error(`the callback did not relay to the listener: ${relay.status} ${JSON.stringify(relay.body)}`);
  const location = new URL(relay.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(LOOPBACK_LISTENER);
  return Object.fromEntries(location.searchParams.entries());
}

/** Relays the callback to the listener, then posts what it received with the member's key: the completion's answer. */
export async function completeByLoopback(node: TestApp, secret: string, callback: string): Promise<Response> {
  const received = await relayedToListener(node, callback);
  return node.http().post('/v1/oauth/authorizations/complete').set('authorization', bearer(secret)).send(received);
}

/** A signed-in browser session of a member, as SSO stores one (sessions hold only the token's hash): the cookie's value and the session's CSRF token. */
export async function openBrowserSession(t: TestApp, organizationId: string, memberId: string): Promise<{ token: string; csrf: string }> {
  const token = randomToken();
  const csrf = randomToken();
  await t.database.query(`INSERT INTO sessions (id, organization_id, member_id, token_hash, csrf_token, expires_at) VALUES ($1, $2, $3, $4, $5, now() + interval '1 hour')`, [
    newId(),
    organizationId,
    memberId,
    hashToken(token),
    csrf,
  ]);
  return { token, csrf };
}

/** `completeByLoopback`, expecting the completion to be answered 200 (the outcome in the body). */
export async function completedByLoopback(node: TestApp, secret: string, callback: string): Promise<Response> {
  const done = await completeByLoopback(node, secret, callback);
  expect({ status: done.status, body: done.body as unknown }).toEqual({ status: 200, body: expect.anything() });
  return done;
}
