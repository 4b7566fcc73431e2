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
   * `reason` is safe to show the member and the model: for every refused destination it is the
   * same text (REFUSED_DESTINATION), so it tells nothing about what a name resolves to or whether
   * it resolves at all (decision 074: no internal DNS oracle). `detail` says why, naming the
   * resolved addresses: for the server log and the sealed cause only.
   */
  | { readonly allowed: false; readonly reason: string; readonly detail?: string };

/**
 * The one reason shown for a refused destination, whether the host is a private or internal
 * address, resolves to one, or does not resolve (decision 074).
 */
export const REFUSED_DESTINATION = `is not a destination the egress policy allows: only hosts that resolve to public addresses are (an operator can list the host or address in ${EGRESS_ALLOW_VARIABLE})`;

/** Told the detail of every refused destination (the module logs it for the operator). */
export type RefusalListener = (detail: string) => void;

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
    private readonly onRefusal: RefusalListener = () => undefined,
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
      const refusal = this.refusalOf(host);
      if (refusal === null) return { allowed: true, url, addresses: [host] };
      return this.refused(`${host} is ${refusal}`);
    }
    let addresses: string[];
    try {
      addresses = (await this.lookup(host)).map((a) => a.address);
    } catch (error) {
      return this.refused(`host ${host} does not resolve (${(error as { code?: unknown }).code ?? (error as Error).message})`);
    }
    if (addresses.length === 0) return this.refused(`host ${host} resolves to no address`);
    if (this.allowedHosts.has(host)) return { allowed: true, url, addresses };
    for (const address of addresses) {
      const refusal = this.refusalOf(address);
      if (refusal !== null) return this.refused(`host ${host} resolved to ${addresses.join(', ')}; ${address} is ${refusal}`);
    }
    return { allowed: true, url, addresses };
  }

  /** A refused destination: the same reason for all, the detail to the listener and the decision. */
  private refused(detail: string): EgressDecision {
    this.onRefusal(detail);
    return { allowed: false, reason: REFUSED_DESTINATION, detail };
  }
}
