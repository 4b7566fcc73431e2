import { AnswerTooLarge } from '@openbot/core';
import { generateKeyPair, SignJWT } from 'jose';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressClient } from '../../../libs/platform/src/egress/egress-client';
import { EgressPolicy } from '../../../libs/platform/src/egress/egress-policy';
import { providerUnreachable } from '../../../libs/features/src/sso/provider-failures';
import { RelyingParties } from '../../../libs/features/src/sso/relying-party';

/**
 * The identity provider's key set is read under OPENBOT_EGRESS_DOCUMENT_LIMIT (decision 016):
 * jose reads it through our customFetch, which reads the body with the cap before jose sees it.
 * A real HTTP server plays a provider whose discovery document is fine and whose key set never ends.
 */

function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"keys":[');
  const chunk = ' '.repeat(16 * 1024);
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

describe('OpenID provider answers are read with a byte cap', () => {
  let server: Server;
  let issuer: string;
  let client: EgressClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/auth`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ['code'],
          }),
        );
      } else {
        endless(res);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new EgressClient(new EgressPolicy(['127.0.0.1']), { toolAnswerBytes: 1024 * 1024, documentBytes: 64 * 1024 });
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('security: an endless key set fails the ID token check as AnswerTooLarge, which the login reports as the provider being unavailable', async () => {
    const parties = new RelyingParties(client);
    const party = await parties.get({ organizationId: 'org-1', revision: 1, issuer, clientId: 'client', redirectUri: 'http://127.0.0.1/cb' }, () => Promise.resolve('secret'));
    const { privateKey } = await generateKeyPair('RS256');
    const idToken = await new SignJWT({ nonce: 'n' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('client')
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const failure = await party.verifyIdToken(idToken, 'n').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AnswerTooLarge);
    expect((failure as Error).message).toBe('the key set is larger than 65536 bytes');
    expect(providerUnreachable(failure)).toMatchObject({ kind: 'unavailable' });
  });
});
