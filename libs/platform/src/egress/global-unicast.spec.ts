import { nonGlobalReason } from './global-unicast';

/** The "global unicast only" rule against the IANA special-purpose registries (decision 016). */
describe('global unicast only', () => {
  it.each([
    // IPv4 special-purpose registry and the ranges outside unicast.
    ['0.0.0.0', 'unspecified'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['100.127.255.254', 'shared (carrier-grade NAT)'],
    ['100.100.100.200', 'cloud metadata'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['168.63.129.16', 'cloud metadata'],
    ['172.20.0.1', 'private'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.0.170', 'IETF protocol assignment'],
    ['192.0.2.10', 'documentation'],
    ['192.31.196.1', 'AS112'],
    ['192.52.193.1', 'AMT'],
    ['192.88.99.1', '6to4 relay'],
    ['192.168.255.255', 'private'],
    ['192.175.48.1', 'AS112'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv6: outside 2000::/3, and the special blocks inside it.
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['::ffff:6440:1', 'shared (carrier-grade NAT)'],
    ['::7f00:1', 'not a global unicast'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['64:ff9b::808:808', 'NAT64'],
    ['64:ff9b:1::1', 'NAT64'],
    ['100::1', 'discard-only'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['fe00::1', 'not a global unicast'],
    ['ff02::1', 'multicast'],
    ['4000::1', 'not a global unicast'],
    ['5f00::1', 'not a global unicast'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'benchmarking'],
    ['2001:1ff:ffff::1', 'IETF protocol assignment'],
    ['2001:db8::1', 'documentation'],
    ['2002:a00:1::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['2620:4f:8000::1', 'AS112'],
    ['3fff::1', 'documentation'],
  ])('security: refuses %s (%s)', (address, reason) => {
    expect(nonGlobalReason(address)).toContain(reason);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '::ffff:808:808',
    '2001:200::1',
    '2001:4860:4860::8888',
    '2003::1',
    '2606:4700::1111',
    '2a00:1450::1',
    '3ffe::1',
    '3fff:1000::1',
  ])('allows the global unicast address %s', (address) => {
    expect(nonGlobalReason(address)).toBeNull();
  });

  it('is not an IP address: a name is never judged as one', () => {
    expect(nonGlobalReason('example.com')).toBe('not an IP address');
  });
});
