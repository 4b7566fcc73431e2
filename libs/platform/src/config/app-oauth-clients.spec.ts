import { ConfigError, parseConfig } from './config';
import { parsePreRegisteredClients } from './app-oauth-clients';

describe('OPENBOT_APP_OAUTH_CLIENTS', () => {
  const id = '0190c3f0-1234-7abc-8def-0123456789ab';

  it('is empty when unset, and reads each client with its registration ID', () => {
    expect(parseConfig({}).appOAuthClients).toEqual([]);
    expect(parseConfig({ OPENBOT_APP_OAUTH_CLIENTS: JSON.stringify([{ id, issuer: 'https://as.example.com', clientId: 'c1', clientSecret: 's' }]) }).appOAuthClients).toEqual([
      { id, issuer: 'https://as.example.com', clientId: 'c1', clientSecret: 's', tokenEndpointAuthMethod: 'client_secret_basic' },
    ]);
  });

  it.each([
    ['not json', 'is not JSON'],
    ['{}', 'must be a JSON array'],
    [JSON.stringify([{ id: 'x', issuer: 'https://a', clientId: 'c' }]), 'id must be a UUID'],
    [JSON.stringify([{ id, issuer: 'ftp://a', clientId: 'c' }]), 'issuer must be an http(s) URL'],
    [JSON.stringify([{ id, issuer: 'https://a' }]), 'clientId is required'],
    [JSON.stringify([{ id, issuer: 'https://a', clientId: 'c', tokenEndpointAuthMethod: 'none' }]), 'tokenEndpointAuthMethod'],
  ])('refuses %s at boot, naming the variable', (value, message) => {
    expect(parsePreRegisteredClients(value)).toEqual({ invalid: expect.stringContaining(message) });
    expect(() => parseConfig({ OPENBOT_APP_OAUTH_CLIENTS: value })).toThrow(ConfigError);
  });
});
