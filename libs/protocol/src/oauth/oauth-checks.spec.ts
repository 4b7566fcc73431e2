import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkResponseIssuer } from './authorization-code';
import type { AuthorizationServerInfo } from './discovery';
import { insufficientScopeOf, readBearerChallenge, scopeUnion } from './discovery';
import { OAuthFailure, toOAuthFailure } from './oauth-failure';

const metadata = (iss: boolean): AuthorizationServerInfo => ({
  issuer: 'https://as.example.com',
  authorization_endpoint: 'https://as.example.com/auth',
  token_endpoint: 'https://as.example.com/token',
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  authorization_response_iss_parameter_supported: iss,
});

describe('OAuth response checks', () => {
  it('RFC 9207: the iss must be the issuer; a missing iss is refused only when the server advertises the parameter', () => {
    expect(() => checkResponseIssuer(metadata(true), 'https://as.example.com')).not.toThrow();
    expect(() => checkResponseIssuer(metadata(true), 'https://evil.example.com')).toThrow(OAuthFailure);
    expect(() => checkResponseIssuer(metadata(true), null)).toThrow(/no iss/);
    expect(() => checkResponseIssuer(metadata(false), null)).not.toThrow();
    expect(() => checkResponseIssuer(metadata(false), 'https://evil.example.com')).toThrow(/another issuer/);
  });

  it('reads a 403 insufficient_scope challenge, and nothing else, as a step-up', () => {
    const challenge = (status: number, header: string) => new Response(null, { status, headers: { 'www-authenticate': header } });
    expect(insufficientScopeOf(challenge(403, 'Bearer error="insufficient_scope", scope="tools admin"'))).toBe('tools admin');
    expect(insufficientScopeOf(challenge(403, 'Bearer error="invalid_token"'))).toBeNull();
    expect(insufficientScopeOf(challenge(401, 'Bearer error="insufficient_scope", scope="x"'))).toBeNull();
    expect(scopeUnion('tools offline_access', null, 'tools admin')).toBe('tools offline_access admin');
    expect(scopeUnion(null, '', undefined)).toBeNull();
  });

  it('maps errors by what they prove: invalid_grant, a lost answer after sending, a refusal before sending', () => {
    expect(toOAuthFailure(Object.assign(new Error('x'), { name: 'OAuthError', code: 'invalid_grant' }), 'token').reason).toBe('invalid_grant');
    expect(toOAuthFailure(Object.assign(new Error('x'), { name: 'OAuthError', code: 'server_error' }), 'token').reason).toBe('unreachable');
    expect(toOAuthFailure(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }), 'token')).toMatchObject({ reason: 'answer_lost', resultLost: true });
    expect(toOAuthFailure(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), 'token')).toMatchObject({ reason: 'unreachable', resultLost: false });
    expect(toOAuthFailure(Object.assign(new Error('no'), { name: 'EgressRefused' }), 'token')).toMatchObject({ reason: 'refused', notSent: true });
  });

  it('reads the challenge of a server that lets initialize through and challenges only later requests (the probe asks tools/list in its session)', async () => {
    const seen: string[] = [];
    let challengeList = true;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const method = (JSON.parse(body) as { method: string }).method;
        seen.push(`${method} ${req.headers['mcp-session-id'] ?? '-'}`);
        if (method === 'initialize') return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end('{"jsonrpc":"2.0","id":0,"result":{}}');
        if (!challengeList) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}');
        res.writeHead(401, { 'www-authenticate': 'Bearer scope="mcp:basic", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    try {
      expect(await readBearerChallenge(fetch, url)).toEqual({ resourceMetadataUrl: 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp', scope: 'mcp:basic' });
      expect(seen).toEqual(['initialize -', 'tools/list s1']);
      challengeList = false;
      await expect(readBearerChallenge(fetch, url)).rejects.toMatchObject({ reason: 'not_required' });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
