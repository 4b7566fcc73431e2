import { newId } from '@openbot/domain';
import { codec, defineWorkflow, type Codec, type Json } from '@openbot/engine';
import {
  discoverAuthorization,
  isOAuthFailure,
  metadataDocumentClient,
  readBearerChallenge,
  registerDynamicClient,
  registrationWay,
  type DiscoveredAuthorization,
  type Fetch,
  type RegistrationWay,
} from '@openbot/protocol';
import type { PreRegisteredOAuthClient } from '../../../platform/src/config/app-oauth-clients';
import { Sql, type Database } from '../../../platform/src/database/sql';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { discoveredCodec } from './oauth-codecs';
import { callbackUri, clientMetadataUri, registrationById, registrationForIssuer, SEALED } from './oauth-records';

interface PrepareState {
  readonly connectionId: string;
  readonly serverUrl: string;
  readonly discovered: DiscoveredAuthorization | null;
  readonly registrationId: string | null;
  readonly failure: { readonly reason: string; readonly message: string } | null;
}

export const AUTHORIZATION_PREPARE = defineWorkflow({
  name: 'app.oauth.prepare',
  audience: 'member',
  input: codec.object({ connectionId: codec.string, serverUrl: codec.string }),
  state: codec.object({
    connectionId: codec.string,
    serverUrl: codec.string,
    discovered: codec.nullable(discoveredCodec),
    registrationId: codec.nullable(codec.string),
    failure: codec.nullable(codec.object({ reason: codec.string, message: codec.string })),
  }) satisfies Codec<PrepareState>,
  result: codec.json,
  calls: { discover: codec.json, register: codec.json },
});

/** What a finished preparation answers: where and how to send the browser, or why not. */
export type PreparedAuthorization =
  | { readonly registrationId: string; readonly resource: string; readonly scope: string | null }
  | { readonly failure: { readonly reason: string; readonly message: string } };

/**
 * Sign-in preparation as an execution (DEVT-01's common workflow): discovery through the call
 * log (the 401 challenge, protected-resource and authorization-server metadata, PKCE S256
 * required), then the registration, keyed by issuer, in the order pre-registered client
 * (`OPENBOT_APP_OAUTH_CLIENTS`) → Client ID Metadata Document (when the server advertises it and
 * the public URL is https; nothing is sent: the server fetches the document from OpenBot) →
 * dynamic registration (RFC 7591). OpenBot makes one of the last two once per issuer. A refusal
 * (`issuer_mismatch`, `pkce_unsupported`, no registration way, ...) is its result, not a retry.
 */
export function authorizationPrepareWorkflow(deps: {
  readonly db: Database;
  readonly fetch: Fetch;
  readonly sealed: SealedRecords;
  readonly publicUrl: string;
  readonly preRegistered: readonly PreRegisteredOAuthClient[];
  /** false (`OPENBOT_APP_OAUTH_METADATA_DOCUMENTS`): never register by Client ID Metadata Document. */
  readonly metadataDocuments: boolean;
}) {
  return AUTHORIZATION_PREPARE.implement({
    initial: (input) => ({ ...input, discovered: null, registrationId: null, failure: null }),
    next: (state) => {
      if (state.failure !== null) {
        const failed: Json = { failure: { ...state.failure } };
        return { end: 'completed', result: failed };
      }
      if (state.discovered === null) return { phase: 'discover' };
      if (state.registrationId === null) return { phase: 'register' };
      const prepared: Json = { registrationId: state.registrationId, resource: state.discovered.resource, scope: state.discovered.scope };
      return { end: 'completed', result: prepared };
    },
    phases: {
      discover: {
        async run(context) {
          const state = context.state;
          const found = await context.call('discover', { safe: true, kind: 'oauth' }, async (): Promise<Json> => {
            try {
              const challenge = await readBearerChallenge(deps.fetch, state.serverUrl, context.signal);
              return discoveredCodec.encode(await discoverAuthorization(deps.fetch, state.serverUrl, challenge));
            } catch (error) {
              if (isOAuthFailure(error) && !error.safeToRetry) return { failure: { reason: error.reason, message: error.message } };
              throw error;
            }
          });
          const failure = (found as { failure?: PrepareState['failure'] }).failure;
          if (failure) return { state: { ...state, failure } };
          return { state: { ...state, discovered: discoveredCodec.decode(found, 'discover') } };
        },
      },
      register: {
        async run(context) {
          const state = context.state;
          const found = state.discovered!;
          const pre = deps.preRegistered.find((client) => client.issuer === found.metadata.issuer);
          // A registration OpenBot already made for the issuer is used whatever its way (a pre-registered client still comes first).
          if (pre === undefined) {
            const existing = await registrationForIssuer(deps.db, found.metadata.issuer);
            if (existing !== null) return { state: { ...state, registrationId: existing.id } };
          }
          const candidateId = newId();
          let way: RegistrationWay;
          try {
            way = registrationWay(found.metadata, { preRegistered: pre !== undefined, metadataDocumentUrl: deps.metadataDocuments ? clientMetadataUri(deps.publicUrl, candidateId) : null });
          } catch (error) {
            if (!isOAuthFailure(error)) throw error;
            return { state: { ...state, failure: { reason: error.reason, message: error.message } } };
          }
          if (way === 'pre_registered') {
            await savePreRegistered(deps, pre!, found);
            return { state: { ...state, registrationId: pre!.id } };
          }
          if (way === 'metadata_document') {
            await saveMetadataDocumentRegistration(deps, candidateId, found);
            const winner = await registrationForIssuer(deps.db, found.metadata.issuer);
            if (winner === null) throw new Error('the registration was saved but cannot be read');
            return { state: { ...state, registrationId: winner.id } };
          }
          const registered = await context.call(
            'register',
            {
              safe: true,
              kind: 'oauth',
              // One dynamic registration per issuer: a race loses quietly and everyone uses the winner's.
              commit: async (tx, saved) => {
                const r = saved.result as { registrationId?: string; client?: Json; redirectUri?: string };
                if (r.registrationId === undefined) return;
                const clientRecordId = await deps.sealed.put(SEALED.client, r.client, new Sql(tx));
                await tx.query(
                  `INSERT INTO app_oauth_registrations (id, issuer, client_id, method, client_record_id, metadata, redirect_uri)
                   VALUES ($1, $2, $3, 'dynamic', $4, $5, $6) ON CONFLICT DO NOTHING`,
                  [r.registrationId, found.metadata.issuer, (r.client as { client_id: string }).client_id, clientRecordId, JSON.stringify(found.metadata), r.redirectUri],
                );
              },
            },
            async (): Promise<Json> => {
              const registrationId = newId();
              const redirectUri = callbackUri(deps.publicUrl, registrationId);
              try {
                // No scope in the registration: the client is shared by every connection of the issuer, and a scope step-up may ask for more.
                const client = await registerDynamicClient(deps.fetch, found.metadata, { redirectUri, clientName: 'OpenBot', scope: null });
                return { registrationId, redirectUri, client: { ...client } };
              } catch (error) {
                if (isOAuthFailure(error) && !error.safeToRetry) return { failure: { reason: error.reason, message: error.message } };
                throw error;
              }
            },
          );
          const failure = (registered as { failure?: PrepareState['failure'] }).failure;
          if (failure) return { state: { ...state, failure } };
          const winner = await registrationForIssuer(deps.db, found.metadata.issuer);
          if (winner === null) throw new Error('the registration was saved but cannot be read');
          return { state: { ...state, registrationId: winner.id } };
        },
      },
    },
  });
}

/** Saves a pre-registered client as its registration (once), with the metadata discovery just checked; nothing is sent. */
async function savePreRegistered(deps: { readonly db: Database; readonly sealed: SealedRecords; readonly publicUrl: string }, pre: PreRegisteredOAuthClient, found: DiscoveredAuthorization): Promise<void> {
  if ((await registrationById(deps.db, pre.id)) !== null) {
    await deps.db.count('UPDATE app_oauth_registrations SET metadata = $2 WHERE id = $1', [pre.id, JSON.stringify(found.metadata)]);
    return;
  }
  await deps.db.transaction(async (tx) => {
    const client = { client_id: pre.clientId, ...(pre.clientSecret === null ? {} : { client_secret: pre.clientSecret }), token_endpoint_auth_method: pre.tokenEndpointAuthMethod };
    const clientRecordId = await deps.sealed.put(SEALED.client, client, tx);
    await tx.query(
      `INSERT INTO app_oauth_registrations (id, issuer, client_id, method, client_record_id, metadata, redirect_uri)
       VALUES ($1, $2, $3, 'pre_registered', $4, $5, $6) ON CONFLICT DO NOTHING`,
      [pre.id, pre.issuer, pre.clientId, clientRecordId, JSON.stringify(found.metadata), callbackUri(deps.publicUrl, pre.id)],
    );
  });
}

/**
 * Saves a Client ID Metadata Document registration: its `client_id` is the URL of its document
 * (served at `GET /v1/oauth/{id}/client-metadata.json`), a public client. Nothing is sent: the
 * authorization server fetches the document when it first sees the `client_id`. Made once per
 * issuer (a race loses quietly; the caller reads the winner).
 */
async function saveMetadataDocumentRegistration(deps: { readonly db: Database; readonly sealed: SealedRecords; readonly publicUrl: string }, registrationId: string, found: DiscoveredAuthorization): Promise<void> {
  const client = metadataDocumentClient(clientMetadataUri(deps.publicUrl, registrationId));
  const lost = new Error('another node made the registration first');
  await deps.db.transaction(async (tx) => {
    const clientRecordId = await deps.sealed.put(SEALED.client, { ...client }, tx);
    const inserted = await tx.query(
      `INSERT INTO app_oauth_registrations (id, issuer, client_id, method, client_record_id, metadata, redirect_uri)
       VALUES ($1, $2, $3, 'metadata_document', $4, $5, $6) ON CONFLICT DO NOTHING`,
      [registrationId, found.metadata.issuer, client.client_id, clientRecordId, JSON.stringify(found.metadata), callbackUri(deps.publicUrl, registrationId)],
    );
    // The race was lost: roll back, so no sealed client is left without its registration.
    if (inserted.rowCount === 0) throw lost;
  }).catch((error: unknown) => {
    if (error !== lost) throw error;
  });
}
