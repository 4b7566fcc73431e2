import type { SealedRecordId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { AuthorizationServerInfo, OAuthClient, TokenSet } from '@openbot/protocol';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';

/** Purposes of the sealed records App OAuth writes (a record opens only under its own purpose). */
export const SEALED = {
  client: 'app-oauth.client',
  verifier: 'app-oauth.pkce-verifier',
  tokens: 'app-oauth.tokens',
  /** The authorization server's URL of one request (it carries the state). */
  request: 'app-oauth.authorization-request',
} as const;

/** A registration as the flows use it: its issuer, metadata and callback, and where its client is sealed. */
export interface Registration {
  readonly id: string;
  readonly issuer: string;
  readonly clientRecordId: string;
  readonly metadata: AuthorizationServerInfo;
  readonly redirectUri: string;
}

export async function registrationById(db: Queryable, id: string): Promise<Registration | null> {
  const { rows } = await db.query<{ id: string; issuer: string; client_record_id: string; metadata: AuthorizationServerInfo; redirect_uri: string }>(
    'SELECT id, issuer, client_record_id, metadata, redirect_uri FROM app_oauth_registrations WHERE id = $1',
    [id],
  );
  const row = rows[0];
  return row === undefined ? null : { id: row.id, issuer: row.issuer, clientRecordId: row.client_record_id, metadata: row.metadata, redirectUri: row.redirect_uri };
}

/** The registration to use at an issuer: a pre-registered client first, then the one OpenBot made (a metadata document or a dynamic one). */
export async function registrationForIssuer(db: Queryable, issuer: string): Promise<Registration | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM app_oauth_registrations WHERE issuer = $1 ORDER BY (method = 'pre_registered') DESC, created_at LIMIT 1`,
    [issuer],
  );
  return rows[0] === undefined ? null : registrationById(db, rows[0].id);
}

export async function openClient(sealed: SealedRecords, recordId: string): Promise<OAuthClient> {
  const record = await sealed.get(recordId as SealedRecordId);
  if (record === null || record.purpose !== SEALED.client) throw new Error('the OAuth client record is missing');
  return record.value as OAuthClient;
}

export async function openTokens(sealed: SealedRecords, recordId: string): Promise<TokenSet> {
  const record = await sealed.get(recordId as SealedRecordId);
  if (record === null || record.purpose !== SEALED.tokens) throw new Error('the OAuth token record is missing');
  return record.value as TokenSet;
}

/** The redirect URI of one registration: its own callback route. */
export function callbackUri(publicUrl: string, registrationId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/v1/oauth/${registrationId}/callback`;
}

/** The Client ID Metadata Document URL of one registration: its `client_id` when it registered that way. */
export function clientMetadataUri(publicUrl: string, registrationId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/v1/oauth/${registrationId}/client-metadata.json`;
}

/** The start URL of one authorization request: the initiating member's signed-in browser opens it (decision 066). */
export function authorizationStartUri(publicUrl: string, authorizationId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/v1/oauth/authorizations/${authorizationId}/start`;
}

/** The path of a registration's callback (the binding cookie's Path). */
export function callbackPath(registrationId: string): string {
  return `/v1/oauth/${registrationId}/callback`;
}
