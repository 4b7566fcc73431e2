import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { nonGlobalReason } from './global-unicast';

/** One resolved address of a host, as `dns.lookup(host, { all: true })` answers. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to every address it has; injectable so tests need no network. */
export type HostLookup = (host: string) => Promise<readonly ResolvedAddress[]>;

/** The variable that widens the policy; every refusal an allow entry could lift names it. */
export const EGRESS_ALLOW_VARIABLE = 'OPENBOT_EGRESS_ALLOW';

export type EgressDecision =
  /** `addresses`: the only addresses a request to this URL may connect to (see EgressClient). */
  | { readonly allowed: true; readonly url: URL; readonly addresses: readonly string[] }
  /**
   * `reason` is safe to show the member and the model: it never names an address the host
   * resolved to (that would map the internal DNS). `detail` does, for the sealed cause only.
   */
  | { readonly allowed: false; readonly reason: string; readonly detail?: string };

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
 * address the host resolves to must be global unicast (global-unicast.ts), unless the host or the
 * address is on the allow list (`OPENBOT_EGRESS_ALLOW`: host names, IP addresses or CIDRs).
 *
 * A decision alone cannot stop DNS rebinding (the name may resolve elsewhere a moment later):
 * the EgressClient connects only to the addresses an allowing decision lists.
 */
export class EgressPolicy {
  private readonly allowedAddresses = new BlockList();
  private readonly allowedHosts = new Set<string>();

  constructor(
    allow: readonly string[],
    private readonly lookup: HostLookup = defaultLookup,
  ) {
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
    if (this.allowedAddresses.check(address, family(address))) return null;
    return nonGlobalReason(address);
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
    if (isIP(host) !== 0) {
      // The member wrote this address: naming it reveals nothing.
      const refusal = this.refusalOf(host);
      if (refusal === null) return { allowed: true, url, addresses: [host] };
      return { allowed: false, reason: `${host} is ${refusal}, which the egress policy refuses ${allowHint()}` };
    }
    let addresses: string[];
    try {
      addresses = (await this.lookup(host)).map((a) => a.address);
    } catch {
      return { allowed: false, reason: `host ${host} does not resolve` };
    }
    if (addresses.length === 0) return { allowed: false, reason: `host ${host} does not resolve` };
    if (this.allowedHosts.has(host)) return { allowed: true, url, addresses };
    for (const address of addresses) {
      const refusal = this.refusalOf(address);
      if (refusal !== null) {
        return {
          allowed: false,
          reason: `host ${host} resolves to ${refusal}, which the egress policy refuses ${allowHint()}`,
          detail: `host ${host} resolved to ${addresses.join(', ')}; ${address} is ${refusal}`,
        };
      }
    }
    return { allowed: true, url, addresses };
  }
}

function allowHint(): string {
  return `(list the host or address in ${EGRESS_ALLOW_VARIABLE} to allow it)`;
}
