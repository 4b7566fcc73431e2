import { newId } from '@openbot/domain';
import { authorizationRequest } from '@openbot/protocol';
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Sql } from '../../../platform/src/database/sql';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { authorizationStartUri, openClient, registrationById, SEALED } from './oauth-records';

/** An authorization request is valid this long, once. */
export const AUTHORIZATION_LIFETIME_MS = 10 * 60_000;

/** Who an authorization request is for: a connection, or a developer test (its developer's own grant). */
export interface AuthorizationHolder {
  readonly connectionId: string | null;
  readonly developerTestId: string | null;
  readonly organizationId: string;
  /** The member who asked: the exchange runs as this member. */
  readonly memberId: string;
  readonly returnTo: string | null;
}

/** An authorization request handed out: its ID, OpenBot's start URL, and the authorization server's URL (for the member who binds it only). */
export interface IssuedAuthorization {
  readonly authorizationId: string;
  /** `GET /v1/oauth/authorizations/{id}/start`: the initiating member's signed-in browser opens it (decision 066). */
  readonly startUrl: string;
  /** The authorization server's URL, with the state: never handed out before the request is bound to its member. */
  readonly serverUrl: string;
}

/**
 * Hands out one authorization request (PKCE S256, state, RFC 8707 resource, `prompt=consent`) for
 * a prepared registration and saves it: the state's hash, the sealed verifier, the sealed
 * authorization-server URL, the registration it belongs to (its callback only),
 * AUTHORIZATION_LIFETIME_MS, once. It is unbound: the callback refuses it until its member binds
 * the browser leg (the start URL in their signed-in browser, or a loopback listener; decision 066).
 * `also` writes the caller's own rows in the same transaction (a developer test shows the start URL).
 */
export async function issueAuthorization(
  deps: { readonly db: Database; readonly sealed: SealedRecords; readonly publicUrl: string },
  prepared: { readonly registrationId: string; readonly resource: string },
  scope: string | null,
  holder: AuthorizationHolder,
  also?: (tx: Sql, issued: IssuedAuthorization) => Promise<void>,
): Promise<IssuedAuthorization> {
  const registration = await registrationById(deps.db, prepared.registrationId);
  if (registration === null) throw new Error('the prepared registration is gone');
  const oauthClient = await openClient(deps.sealed, registration.clientRecordId);
  const state = randomBytes(32).toString('base64url');
  const request = await authorizationRequest(registration.metadata, oauthClient, { redirectUri: registration.redirectUri, state, resource: prepared.resource, scope });
  const authorizationId = newId();
  const issued: IssuedAuthorization = { authorizationId, startUrl: authorizationStartUri(deps.publicUrl, authorizationId), serverUrl: request.url };
  await deps.db.transaction(async (tx) => {
    const verifier = await deps.sealed.put(SEALED.verifier, request.codeVerifier, tx);
    const requestRecord = await deps.sealed.put(SEALED.request, request.url, tx);
    await tx.count(
      `INSERT INTO app_oauth_authorizations (id, registration_id, connection_id, developer_test_id, organization_id, member_id, state_hash, verifier_record_id, resource, scope, return_to, expires_at, request_record_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now() + make_interval(secs => $12::double precision / 1000), $13)`,
      [
        authorizationId,
        registration.id,
        holder.connectionId,
        holder.developerTestId,
        holder.organizationId,
        holder.memberId,
        stateHash(state),
        verifier,
        prepared.resource,
        scope,
        holder.returnTo,
        AUTHORIZATION_LIFETIME_MS,
        requestRecord,
      ],
    );
    if (also !== undefined) await also(tx, issued);
  });
  return issued;
}

/** The state is never stored: its SHA-256 finds the request. */
export function stateHash(state: string): Buffer {
  return createHash('sha256').update(state, 'utf8').digest();
}
