import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** One resolved address of a host, as `dns.lookup(host, { all: true })` answers. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to every address it has; injectable so tests need no network. */
export type HostLookup = (host: string) => Promise<readonly ResolvedAddress[]>;

export type EgressDecision =
  | { readonly allowed: true; readonly url: URL; readonly addresses: readonly string[] }
  | { readonly allowed: false; readonly reason: string };

/** Ranges no organization-supplied URL may reach unless `OPENBOT_EGRESS_ALLOW` lists them (docs/architecture.md "Egress"). */
const DENIED_RANGES: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['::', 128, 'ipv6', 'the unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['fc00::', 7, 'ipv6', 'a private (unique local) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
];

/** Cloud metadata endpoints, named separately so the refusal says what they are. */
const METADATA_ADDRESSES: ReadonlyArray<readonly [string, 'ipv4' | 'ipv6']> = [
  ['169.254.169.254', 'ipv4'],
  ['fd00:ec2::254', 'ipv6'],
];

const defaultLookup: HostLookup = (host) => dnsLookup(host, { all: true, verbatim: true });

/** A URL host without IPv6 brackets, lower-case, without the trailing root dot. */
function normalizeHost(hostname: string): string {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return bare.toLowerCase().replace(/\.$/, '');
}

function family(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 4 ? 'ipv4' : 'ipv6';
}

/**
 * Decides whether the server may call an organization-supplied URL: http or https only; every
 * address the host resolves to must be public, unless the host or the address is on the allow
 * list (`OPENBOT_EGRESS_ALLOW`: host names, IP addresses or CIDRs). BlockList matches IPv4 rules
 * against IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) too.
 *
 * Checks at configuration time cannot stop DNS rebinding: callers check again right before each
 * request (and on each redirect) with the addresses they then connect to.
 */
export class EgressPolicy {
  private readonly denied: ReadonlyArray<{ readonly list: BlockList; readonly reason: string }>;
  private readonly metadata = new BlockList();
  private readonly allowedAddresses = new BlockList();
  private readonly allowedHosts = new Set<string>();

  constructor(
    allow: readonly string[],
    private readonly lookup: HostLookup = defaultLookup,
  ) {
    this.denied = DENIED_RANGES.map(([network, prefix, type, reason]) => {
      const list = new BlockList();
      list.addSubnet(network, prefix, type);
      return { list, reason };
    });
    for (const [address, type] of METADATA_ADDRESSES) this.metadata.addAddress(address, type);
    for (const entry of allow) {
      const [address, bits] = entry.split('/');
      const host = normalizeHost(address ?? '');
      if (isIP(host) === 0) {
        this.allowedHosts.add(host);
      } else if (bits === undefined) {
        this.allowedAddresses.addAddress(host, family(host));
      } else {
        this.allowedAddresses.addSubnet(host, Number(bits), family(host));
      }
    }
  }

  /** Why `address` may not be called, or null when it may. */
  refusalOf(address: string): string | null {
    if (isIP(address) === 0) return 'not an IP address';
    const type = family(address);
    if (this.allowedAddresses.check(address, type)) return null;
    if (this.metadata.check(address, type)) return 'a cloud metadata address';
    return this.denied.find(({ list }) => list.check(address, type))?.reason ?? null;
  }

  /** Resolves the URL's host and decides; never throws for a bad URL or a failed lookup. */
  async check(rawUrl: string): Promise<EgressDecision> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return { allowed: false, reason: 'is not a valid URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return { allowed: false, reason: 'must use http or https' };
    }
    const host = normalizeHost(url.hostname);
    if (host === '') return { allowed: false, reason: 'has no host' };
    let addresses: string[];
    if (isIP(host) !== 0) {
      addresses = [host];
    } else {
      try {
        addresses = (await this.lookup(host)).map((a) => a.address);
      } catch {
        return { allowed: false, reason: `host ${host} does not resolve` };
      }
      if (addresses.length === 0) return { allowed: false, reason: `host ${host} does not resolve` };
    }
    if (this.allowedHosts.has(host)) return { allowed: true, url, addresses };
    for (const address of addresses) {
      const refusal = this.refusalOf(address);
      if (refusal !== null) {
        return { allowed: false, reason: `host ${host} resolves to ${address}, ${refusal}, which egress policy refuses` };
      }
    }
    return { allowed: true, url, addresses };
  }
}
