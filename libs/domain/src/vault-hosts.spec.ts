import { allowedHostProblem, hostAllowed, hostsBeyond } from './vault-hosts';

describe('Vault allowedHosts', () => {
  it('accepts host names, wildcard patterns, IP addresses and ports; refuses the rest', () => {
    for (const ok of ['api.example.com', '*.example.com', 'localhost:8080', '127.0.0.1', '[::1]:443', 'API.Example.com']) expect(allowedHostProblem(ok)).toBeNull();
    for (const bad of ['', '*', '*.', 'https://api.example.com', 'api.example.com/path', 'a..b', 'x:0', 'x:70000', '*.*.example.com', 'ex ample.com']) {
      expect(allowedHostProblem(bad)).not.toBeNull();
    }
  });

  it('[SEC-02] a pattern admits only its host (and port when it names one)', () => {
    expect(hostAllowed(['api.example.com'], 'https://api.example.com/v1')).toBe(true);
    expect(hostAllowed(['api.example.com'], 'https://API.EXAMPLE.COM./v1')).toBe(true);
    expect(hostAllowed(['api.example.com'], 'https://api.example.com.evil.test/v1')).toBe(false);
    expect(hostAllowed(['api.example.com'], 'https://evil.test/?api.example.com')).toBe(false);
    expect(hostAllowed(['api.example.com:8443'], 'https://api.example.com/v1')).toBe(false);
    expect(hostAllowed(['api.example.com:443'], 'https://api.example.com/v1')).toBe(true);
    expect(hostAllowed(['127.0.0.1:9000'], 'http://127.0.0.1:9000/x')).toBe(true);
    expect(hostAllowed(['127.0.0.1:9000'], 'http://127.0.0.1:9001/x')).toBe(false);
    expect(hostAllowed(['[::1]:9000'], 'http://[::1]:9000/x')).toBe(true);
    expect(hostAllowed([], 'https://api.example.com')).toBe(false);
    expect(hostAllowed(['api.example.com'], 'not a url')).toBe(false);
  });

  it('[SEC-02] a wildcard admits names under its domain, never the domain itself or a look-alike', () => {
    expect(hostAllowed(['*.example.com'], 'https://a.example.com')).toBe(true);
    expect(hostAllowed(['*.example.com'], 'https://a.b.example.com')).toBe(true);
    expect(hostAllowed(['*.example.com'], 'https://example.com')).toBe(false);
    expect(hostAllowed(['*.example.com'], 'https://badexample.com')).toBe(false);
  });

  it('[SEC-02] hostsBeyond names the patterns a change of allowedHosts would add; keeping and narrowing add none', () => {
    const before = ['api.example.com', '*.payments.test', 'db.internal:5432'];
    expect(hostsBeyond(before, ['API.example.com'])).toEqual([]);
    expect(hostsBeyond(before, ['a.payments.test', '*.eu.payments.test', 'a.payments.test:8443'])).toEqual([]);
    expect(hostsBeyond(before, ['db.internal:5432', 'db.internal:05432'])).toEqual([]);
    expect(hostsBeyond(before, ['evil.example', 'payments.test', '*.test', 'db.internal', 'db.internal:5433', 'api.example.com.evil.test'])).toEqual([
      'evil.example',
      'payments.test',
      '*.test',
      'db.internal',
      'db.internal:5433',
      'api.example.com.evil.test',
    ]);
    expect(hostsBeyond(['api.example.com:443'], ['api.example.com'])).toEqual(['api.example.com']);
    expect(hostsBeyond(['[::1]:9000'], ['[::1]:9000', '[::1]'])).toEqual(['[::1]']);
  });
});
