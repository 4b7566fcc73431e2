import type { OAuthClient } from './authorization-code';
import type { AuthorizationServerInfo } from './discovery';
import { OAuthFailure } from './oauth-failure';

/**
 * How OpenBot gets an OAuth client at an authorization server, in the order it tries them:
 * - `pre_registered`: a client the operator registered there beforehand;
 * - `metadata_document`: a Client ID Metadata Document (CIMD): the `client_id` is an https URL
 *   of OpenBot that serves the client's metadata, which the server fetches itself. Only when
 *   the server advertises `client_id_metadata_document_supported` and the URL is https;
 * - `dynamic`: dynamic client registration (RFC 7591) at the `registration_endpoint`.
 */
export type RegistrationWay = 'pre_registered' | 'metadata_document' | 'dynamic';

/**
 * The first registration way that applies: a pre-registered client, then a Client ID Metadata
 * Document, then dynamic registration. Throws `registration_failed` when none does.
 */
export function registrationWay(metadata: AuthorizationServerInfo, options: { readonly preRegistered: boolean; readonly metadataDocumentUrl: string | null }): RegistrationWay {
  if (options.preRegistered) return 'pre_registered';
  if (metadata.client_id_metadata_document_supported === true && options.metadataDocumentUrl !== null && isMetadataDocumentUrl(options.metadataDocumentUrl)) return 'metadata_document';
  if (metadata.registration_endpoint !== undefined) return 'dynamic';
  throw new OAuthFailure('registration_failed', 'no client is pre-registered for the authorization server, and it offers neither Client ID Metadata Documents (with an https public URL) nor dynamic client registration');
}

/** A CIMD `client_id` must be an https URL with a path, no fragment and no credentials. */
export function isMetadataDocumentUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '';
}

/** The client of a CIMD registration: its `client_id` is the document's URL; a public client (`none`), with PKCE. */
export function metadataDocumentClient(documentUrl: string): OAuthClient {
  return { client_id: documentUrl, token_endpoint_auth_method: 'none' };
}

/** The client metadata OpenBot publishes at a CIMD URL (the server reads it; `client_id` must equal the URL it fetched). */
export interface ClientMetadataDocument {
  readonly client_id: string;
  readonly client_name: string;
  readonly client_uri?: string;
  readonly redirect_uris: readonly string[];
  readonly grant_types: readonly string[];
  readonly response_types: readonly string[];
  readonly token_endpoint_auth_method: 'none';
  readonly application_type: 'web';
}

/**
 * The Client ID Metadata Document of one registration: its own URL as `client_id`, its one
 * redirect URI, the authorization-code and refresh grants, a public client (no shared secret:
 * CIMD forbids secret-based methods).
 */
export function clientMetadataDocument(options: { readonly documentUrl: string; readonly redirectUri: string; readonly clientName: string; readonly clientUri: string | null }): ClientMetadataDocument {
  return {
    client_id: options.documentUrl,
    client_name: options.clientName,
    ...(options.clientUri === null ? {} : { client_uri: options.clientUri }),
    redirect_uris: [options.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    application_type: 'web',
  };
}
