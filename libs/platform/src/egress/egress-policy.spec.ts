import { EgressPolicy, REFUSED_DESTINATION, type HostLookup } from './egress-policy';

/** A resolver with fixed answers: the tests never touch the network. */
function fakeLookup(table: Record<string, string[]>): HostLookup {
  return (host) => {
    const addresses = table[host];
    if (addresses === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

const NO_DNS = fakeLookup({});

describe('egress policy', () => {
  const policy = new EgressPolicy([], NO_DNS);

  it.each([
    ['0.0.0.0 (unspecified)', 'http://0.0.0.0/', 'unspecified'],
    ['0.1.2.3 (this network)', 'http://0.1.2.3/', 'unspecified'],
    ['127.0.0.1 (loopback)', 'http://127.0.0.1:9999/v1', 'loopback'],
    ['127.255.255.254 (loopback /8)', 'https://127.255.255.254/', 'loopback'],
    ['10.0.0.5 (private)', 'http://10.0.0.5/v1', 'private'],
    ['172.16.0.1 (private /12 start)', 'http://172.16.0.1/', 'private'],
    ['172.31.255.255 (private /12 end)', 'http://172.31.255.255/', 'private'],
    ['192.168.1.1 (private)', 'http://192.168.1.1/', 'private'],
    ['169.254.1.1 (link-local)', 'http://169.254.1.1/', 'link-local'],
    ['169.254.169.254 (cloud metadata)', 'http://169.254.169.254/latest/meta-data', 'metadata'],
    ['[::] (unspecified)', 'http://[::]/', 'unspecified'],
    ['[::1] (loopback)', 'http://[::1]:8080/', 'loopback'],
    ['[fc00::1] (unique local)', 'http://[fc00::1]/', 'private'],
    ['[fd12:3456::1] (unique local)', 'http://[fd12:3456::1]/', 'private'],
    ['[fe80::1] (link-local)', 'http://[fe80::1]/', 'link-local'],
    ['[fd00:ec2::254] (cloud metadata)', 'http://[fd00:ec2::254]/', 'metadata'],
    ['[::ffff:127.0.0.1] (IPv4-mapped loopback)', 'http://[::ffff:127.0.0.1]/', 'loopback'],
    ['[::ffff:a00:5] (IPv4-mapped private)', 'http://[::ffff:a00:5]/', 'private'],
    ['0x7f.1 (loopback in hex shorthand)', 'http://0x7f.1/', 'loopback'],
    ['2130706433 (loopback as one integer)', 'http://2130706433/', 'loopback'],
  ])('refuses %s', async (_label, url, reason) => {
    const decision = await policy.check(url);
    expect(decision.allowed).toBe(false);
    expect(decision.allowed === false && decision.reason).toBe(REFUSED_DESTINATION);
    expect(decision.allowed === false && decision.detail).toContain(reason);
  });

  it.each([
    ['a public IPv4 address', 'https://8.8.8.8/v1'],
    ['172.32.0.1, just past the private /12', 'http://172.32.0.1/'],
    ['172.15.255.255, just before the private /12', 'http://172.15.255.255/'],
    ['169.255.0.1, just past link-local', 'http://169.255.0.1/'],
    ['11.0.0.1, just past 10/8', 'http://11.0.0.1/'],
    ['a public IPv6 address', 'https://[2001:4860:4860::8888]/'],
    ['an IPv4-mapped public address', 'http://[::ffff:8.8.8.8]/'],
  ])('allows %s', async (_label, url) => {
    const decision = await policy.check(url);
    expect(decision).toEqual({ allowed: true, url: new URL(url), addresses: [expect.any(String)] });
  });

  it.each([
    ['ftp', 'ftp://8.8.8.8/'],
    ['file', 'file:///etc/passwd'],
    ['javascript', 'javascript:alert(1)'],
    ['data', 'data:text/plain,hi'],
    ['ws', 'ws://8.8.8.8/'],
  ])('refuses the %s scheme: http and https only', async (_label, url) => {
    expect(await policy.check(url)).toEqual({ allowed: false, reason: 'must use http or https' });
  });

  it.each([['not a url'], [''], ['http://'], ['//8.8.8.8/'], ['8.8.8.8']])('refuses %j: not a valid absolute URL', async (url) => {
    expect((await policy.check(url)).allowed).toBe(false);
  });

  it('resolves host names and refuses when any resolved address is denied', async () => {
    const dns = new EgressPolicy([], fakeLookup({
      'public.example': ['93.184.215.14'],
      'internal.example': ['10.1.2.3'],
      'mixed.example': ['93.184.215.14', '192.168.0.7'],
      'metadata.example': ['169.254.169.254'],
      'v6.example': ['2606:4700::1111', 'fe80::5'],
    }));
    expect(await dns.check('https://public.example/v1')).toEqual({ allowed: true, url: new URL('https://public.example/v1'), addresses: ['93.184.215.14'] });
    for (const [host, reason] of [
      ['internal.example', 'private'],
      ['mixed.example', 'private'],
      ['metadata.example', 'metadata'],
      ['v6.example', 'link-local'],
    ] as const) {
      const decision = await dns.check(`https://${host}/`);
      expect({ host, allowed: decision.allowed }).toEqual({ host, allowed: false });
      expect(decision.allowed === false && decision.reason).toBe(REFUSED_DESTINATION);
      expect(decision.allowed === false && decision.detail).toContain(reason);
    }
  });

  it('refuses a host that does not resolve, or resolves to nothing', async () => {
    const dns = new EgressPolicy([], fakeLookup({ 'empty.example': [] }));
    for (const url of ['https://missing.example/', 'https://empty.example/']) {
      const decision = await dns.check(url);
      expect(decision.allowed).toBe(false);
      expect(decision.allowed === false && decision.reason).toBe(REFUSED_DESTINATION);
      expect(decision.allowed === false && decision.detail).toMatch(/does not resolve|resolves to no address/);
    }
  });

  it('refuses localhost with the real resolver (it resolves to loopback)', async () => {
    const real = new EgressPolicy([]);
    const decision = await real.check('http://localhost:9999/v1');
    expect(decision.allowed).toBe(false);
    expect(decision.allowed === false && decision.detail).toContain('loopback');
  });

  describe('the allow list (OPENBOT_EGRESS_ALLOW)', () => {
    it('an allowed address lets exactly that address through', async () => {
      const allowing = new EgressPolicy(['127.0.0.1'], NO_DNS);
      expect((await allowing.check('http://127.0.0.1:9999/v1')).allowed).toBe(true);
      expect((await allowing.check('http://[::ffff:127.0.0.1]/')).allowed).toBe(true);
      expect((await allowing.check('http://127.0.0.2/')).allowed).toBe(false);
      expect((await allowing.check('http://[::1]/')).allowed).toBe(false);
      expect((await allowing.check('http://10.0.0.5/')).allowed).toBe(false);
    });

    it('an allowed CIDR lets every address inside it through, and nothing outside', async () => {
      const allowing = new EgressPolicy(['10.20.0.0/16', 'fd00:1::/32'], NO_DNS);
      expect((await allowing.check('http://10.20.3.4/')).allowed).toBe(true);
      expect((await allowing.check('http://10.21.0.1/')).allowed).toBe(false);
      expect((await allowing.check('http://[fd00:1:2::3]/')).allowed).toBe(true);
      expect((await allowing.check('http://[fd00:2::3]/')).allowed).toBe(false);
    });

    it('an allowed CIDR covering the metadata address lets it through (the operator chose so)', async () => {
      const allowing = new EgressPolicy(['169.254.0.0/16'], NO_DNS);
      expect((await allowing.check('http://169.254.169.254/')).allowed).toBe(true);
    });

    it('an allowed host name lets that host through whatever it resolves to, case and root dot aside', async () => {
      const allowing = new EgressPolicy(['Models.Internal'], fakeLookup({ 'models.internal': ['10.9.8.7'], 'other.internal': ['10.9.8.7'] }));
      expect(await allowing.check('http://models.internal:8000/v1')).toEqual({ allowed: true, url: new URL('http://models.internal:8000/v1'), addresses: ['10.9.8.7'] });
      expect((await allowing.check('http://MODELS.internal./v1')).allowed).toBe(true);
      expect((await allowing.check('http://other.internal/v1')).allowed).toBe(false);
    });

    it('an address resolved from a name is allowed when the address is on the list', async () => {
      const allowing = new EgressPolicy(['10.9.8.7'], fakeLookup({ 'a.internal': ['10.9.8.7'], 'b.internal': ['10.9.8.7', '10.9.8.8'] }));
      expect((await allowing.check('http://a.internal/')).allowed).toBe(true);
      expect((await allowing.check('http://b.internal/')).allowed).toBe(false);
    });

    it('an allowed host name still has to resolve', async () => {
      const allowing = new EgressPolicy(['gone.internal'], NO_DNS);
      expect((await allowing.check('http://gone.internal/')).allowed).toBe(false);
    });

    it('an allowed IPv6 address is matched without its URL brackets', async () => {
      const allowing = new EgressPolicy(['::1'], NO_DNS);
      expect((await allowing.check('http://[::1]:8080/')).allowed).toBe(true);
      expect((await allowing.check('http://127.0.0.1/')).allowed).toBe(false);
    });
  });

  it('security: every refused destination gets the same reason (no DNS oracle), naming OPENBOT_EGRESS_ALLOW; the detail, told to the listener, says why', async () => {
    const details: string[] = [];
    const dns = new EgressPolicy([], fakeLookup({ 'wiki.corp.example': ['93.184.215.14', '10.20.30.40'], 'db.corp.example': ['127.0.0.1'], 'empty.example': [] }), (d) => details.push(d));
    const reasons = new Set<string>();
    for (const url of ['https://wiki.corp.example/api', 'https://db.corp.example/', 'https://missing.corp.example/', 'https://empty.example/', 'http://10.1.2.3/', 'http://[::1]/']) {
      const decision = await dns.check(url);
      expect({ url, allowed: decision.allowed }).toEqual({ url, allowed: false });
      if (!decision.allowed) reasons.add(decision.reason);
    }
    expect([...reasons]).toEqual([REFUSED_DESTINATION]);
    expect(REFUSED_DESTINATION).toContain('OPENBOT_EGRESS_ALLOW');
    expect(REFUSED_DESTINATION).not.toMatch(/loopback|private|resolve to a|does not resolve/);
    expect(details).toEqual([
      'host wiki.corp.example resolved to 93.184.215.14, 10.20.30.40; 10.20.30.40 is a private address',
      'host db.corp.example resolved to 127.0.0.1; 127.0.0.1 is a loopback address',
      expect.stringMatching(/^host missing\.corp\.example does not resolve/),
      'host empty.example resolves to no address',
      '10.1.2.3 is a private address',
      '::1 is a loopback address',
    ]);
  });

  it('refusalOf answers null for public addresses and a reason for denied ones', () => {
    expect(policy.refusalOf('1.1.1.1')).toBeNull();
    expect(policy.refusalOf('127.0.0.1')).toBe('a loopback address');
    expect(policy.refusalOf('169.254.169.254')).toBe('a cloud metadata address');
    expect(policy.refusalOf('not-an-ip')).toBe('not an IP address');
  });
});
