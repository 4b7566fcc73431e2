import type { AuthorizationServerInfo } from './discovery';
import { OAuthFailure } from './oauth-failure';
import { clientMetadataDocument, isMetadataDocumentUrl, metadataDocumentClient, registrationWay } from './registration-order';

const server = (extra: Partial<AuthorizationServerInfo>): AuthorizationServerInfo => ({
  issuer: 'https://as.example.com',
  authorization_endpoint: 'https://as.example.com/auth',
  token_endpoint: 'https://as.example.com/token',
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  ...extra,
});
const DOCUMENT = 'https://openbot.example.com/v1/oauth/0b6c6a2e-1f0e-4c55-9a57-3f4f2b1d8c11/client-metadata.json';

describe('App OAuth registration order', () => {
  it('pre-registered client, then Client ID Metadata Document, then dynamic registration', () => {
    const everything = server({ client_id_metadata_document_supported: true, registration_endpoint: 'https://as.example.com/reg' });
    expect(registrationWay(everything, { preRegistered: true, metadataDocumentUrl: DOCUMENT })).toBe('pre_registered');
    expect(registrationWay(everything, { preRegistered: false, metadataDocumentUrl: DOCUMENT })).toBe('metadata_document');
    expect(registrationWay(server({ registration_endpoint: 'https://as.example.com/reg' }), { preRegistered: false, metadataDocumentUrl: DOCUMENT })).toBe('dynamic');
    expect(registrationWay(server({ client_id_metadata_document_supported: true }), { preRegistered: false, metadataDocumentUrl: DOCUMENT })).toBe('metadata_document');
  });

  it('a metadata document only over https (a plain http public URL registers dynamically), and no way at all is registration_failed', () => {
    const both = server({ client_id_metadata_document_supported: true, registration_endpoint: 'https://as.example.com/reg' });
    expect(registrationWay(both, { preRegistered: false, metadataDocumentUrl: 'http://127.0.0.1:8080/v1/oauth/x/client-metadata.json' })).toBe('dynamic');
    expect(registrationWay(both, { preRegistered: false, metadataDocumentUrl: null })).toBe('dynamic');
    expect(() => registrationWay(server({ client_id_metadata_document_supported: true }), { preRegistered: false, metadataDocumentUrl: 'http://127.0.0.1/doc.json' })).toThrow(OAuthFailure);
    expect(() => registrationWay(server({}), { preRegistered: false, metadataDocumentUrl: DOCUMENT })).toThrow(expect.objectContaining({ reason: 'registration_failed' }));
    expect(isMetadataDocumentUrl('https://openbot.example.com/')).toBe(false);
    expect(isMetadataDocumentUrl('https://user:pw@openbot.example.com/doc.json')).toBe(false);
    expect(isMetadataDocumentUrl('https://openbot.example.com/doc.json#x')).toBe(false);
  });

  it('the document names its own URL as client_id, the one redirect URI, and a public client without a secret', () => {
    expect(metadataDocumentClient(DOCUMENT)).toEqual({ client_id: DOCUMENT, token_endpoint_auth_method: 'none' });
    expect(clientMetadataDocument({ documentUrl: DOCUMENT, redirectUri: 'https://openbot.example.com/v1/oauth/r/callback', clientName: 'OpenBot', clientUri: null })).toEqual({
      client_id: DOCUMENT,
      client_name: 'OpenBot',
      redirect_uris: ['https://openbot.example.com/v1/oauth/r/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'web',
    });
  });
});
