import { BlockList, isIP } from 'node:net';

/**
 * "Global unicast only": the one rule deciding whether an address is on the public internet.
 * Everything else — the IANA special-purpose registries (IPv4: RFC 6890 and its updates; IPv6:
 * the same registry, where global unicast is 2000::/3 minus its special blocks), multicast and
 * the reserved 240.0.0.0/4 — is refused. A few special blocks the registries mark globally
 * reachable (AS112 and AMT anycast, PCP/TURN anycast inside 2001::/23) are refused too: no
 * organization needs them, and a deny-by-default rule stays simple to check.
 */
type Range = readonly [network: string, prefix: number, reason: string];

const PRIVATE = 'a private address';
const DOCUMENTATION = 'a documentation address';

/** Refused IPv4 blocks, most specific reason first where they nest. */
const IPV4_REFUSED: readonly Range[] = [
  ['0.0.0.0', 8, 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, PRIVATE],
  ['100.64.0.0', 10, 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, PRIVATE],
  ['192.0.0.0', 24, 'an IETF protocol assignment address'],
  ['192.0.2.0', 24, DOCUMENTATION],
  ['192.31.196.0', 24, 'an AS112 anycast address'],
  ['192.52.193.0', 24, 'an AMT anycast address'],
  ['192.88.99.0', 24, 'a 6to4 relay anycast address'],
  ['192.168.0.0', 16, PRIVATE],
  ['192.175.48.0', 24, 'an AS112 anycast address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, DOCUMENTATION],
  ['203.0.113.0', 24, DOCUMENTATION],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

/** Refused IPv6 blocks outside 2000::/3, named so the refusal says what they are. */
const IPV6_NAMED: readonly Range[] = [
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['64:ff9b::', 96, 'an IPv6 transition (NAT64) address'],
  ['64:ff9b:1::', 48, 'an IPv6 transition (NAT64) address'],
  ['100::', 64, 'a discard-only address'],
  ['fc00::', 7, 'a private (unique local) address'],
  ['fe80::', 10, 'a link-local address'],
  ['ff00::', 8, 'a multicast address'],
];

/** Special blocks inside 2000::/3. */
const IPV6_GLOBAL_EXCEPTIONS: readonly Range[] = [
  ['2001::', 23, 'an IETF protocol assignment address (Teredo, benchmarking, ORCHID)'],
  ['2001:db8::', 32, DOCUMENTATION],
  ['2002::', 16, 'an IPv6 transition (6to4) address'],
  ['2620:4f:8000::', 48, 'an AS112 anycast address'],
  ['3fff::', 20, DOCUMENTATION],
];

/**
 * Cloud metadata services, named apart so the refusal says what they are: AWS/GCP/Azure/OpenStack
 * (169.254.169.254), AWS over IPv6 (fd00:ec2::254), Alibaba Cloud (100.100.100.200) and Azure's
 * wire server (168.63.129.16, a public address reachable only from inside Azure).
 */
const METADATA: ReadonlyArray<readonly [string, 'ipv4' | 'ipv6']> = [
  ['169.254.169.254', 'ipv4'],
  ['100.100.100.200', 'ipv4'],
  ['168.63.129.16', 'ipv4'],
  ['fd00:ec2::254', 'ipv6'],
];

const METADATA_REASON = 'a cloud metadata address';

function listOf(ranges: readonly Range[], type: 'ipv4' | 'ipv6'): ReadonlyArray<{ readonly list: BlockList; readonly reason: string }> {
  return ranges.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, type);
    return { list, reason };
  });
}

const ipv4Refused = listOf(IPV4_REFUSED, 'ipv4');
const ipv6Named = listOf(IPV6_NAMED, 'ipv6');
const ipv6Exceptions = listOf(IPV6_GLOBAL_EXCEPTIONS, 'ipv6');
const metadata = new BlockList();
for (const [address, type] of METADATA) metadata.addAddress(address, type);
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');
/** IPv4-mapped IPv6 (::ffff:a.b.c.d) reaches the IPv4 address: it is judged as that address. */
const ipv4Mapped = new BlockList();
ipv4Mapped.addSubnet('::ffff:0:0', 96, 'ipv6');

/**
 * Why `address` is not a global unicast address (e.g. "a loopback address"), or null when it is.
 * IPv4 blocks also match IPv4-mapped IPv6 forms (`net.BlockList` compares them as IPv4).
 */
export function nonGlobalReason(address: string): string | null {
  const version = isIP(address);
  if (version === 0) return 'not an IP address';
  const type = version === 4 ? 'ipv4' : 'ipv6';
  if (metadata.check(address, type)) return METADATA_REASON;
  if (version === 4 || ipv4Mapped.check(address, 'ipv6')) {
    return ipv4Refused.find(({ list }) => list.check(address, type))?.reason ?? null;
  }
  const named = ipv6Named.find(({ list }) => list.check(address, 'ipv6'));
  if (named !== undefined) return named.reason;
  if (!globalUnicastV6.check(address, 'ipv6')) return 'not a global unicast address';
  return ipv6Exceptions.find(({ list }) => list.check(address, 'ipv6'))?.reason ?? null;
}
