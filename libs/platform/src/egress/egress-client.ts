import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { trackedConnector, undiciPost, type StreamingPost } from '@openbot/core';
import { Agent, fetch as undiciFetch } from 'undici';
import { EgressPolicy } from './egress-policy';

/** The egress policy refused a URL at call time (a provider or tool URL that now resolves somewhere forbidden). */
export class EgressRefused extends Error {
  override readonly name = 'EgressRefused';
  /** Repeating the request cannot help. */
  readonly safeToRetry = false;
}

/** What the policy saw (the resolved addresses): kept as the sealed cause of a refusal, never shown. */
export class EgressRefusalDetail extends Error {
  override readonly name = 'EgressRefusalDetail';
}

/** Byte caps on answers read from organization-supplied servers. */
export interface EgressLimits {
  /** HTTP and background tool answers. */
  readonly toolAnswerBytes: number;
  /** Provider error bodies, OpenID discovery documents, key sets, token and userinfo answers. */
  readonly documentBytes: number;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Connection pools kept per (host, approved addresses); the least recently used beyond this are closed. */
const MAX_PINNED_AGENTS = 64;

/**
 * The one HTTP client for organization-supplied URLs: model providers, HTTP and background
 * tools, OpenID discovery, key sets, token and userinfo endpoints (and every later App, webhook
 * and channel). Before each request the egress policy resolves and judges the host; the request
 * then connects only to the addresses it approved, through an undici Agent whose `lookup` hands
 * back exactly those addresses. A second DNS answer (rebinding to 127.0.0.1 or 10.x after a
 * public first answer) is never asked for. TLS SNI and the Host header still name the original
 * host. Redirects are not followed: a redirect answer is returned as it is, so no request
 * reaches a host the policy did not see.
 */
export class EgressClient {
  /** A `fetch` for adapters and libraries that take one (jose, the provider adapters). */
  readonly fetch: typeof fetch = (input, init) => this.request(input, init);
  /** A streaming POST for the model provider adapters, under the same policy and pinning as `fetch`. */
  readonly post: StreamingPost = async (url, init) => undiciPost(await this.approvedAgent(url, true))(url, init);
  private readonly agents = new Map<string, Agent>();

  constructor(
    private readonly policy: EgressPolicy,
    readonly limits: EgressLimits,
    /** Extra trusted CA certificates (PEM), added to Node's own roots; undefined: the system's only. */
    private readonly extraCa?: string,
  ) {}

  /** Closes every pooled connection (the node is shutting down). */
  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  private async request(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('EgressClient.fetch takes a URL, not a Request');
    const url = typeof input === 'string' ? input : input.href;
    const dispatcher = await this.approvedAgent(url);
    // undici's own fetch with its own Agent: the global fetch bundles another undici copy whose
    // dispatcher interface need not match the installed one.
    const response = await undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), redirect: 'manual', dispatcher });
    return response as unknown as Response;
  }

  /** The pinned connection pool for `url` once the policy approved it; EgressRefused otherwise. */
  private async approvedAgent(url: string, streams = false): Promise<Agent> {
    const decision = await this.policy.check(url);
    if (!decision.allowed) {
      const cause = decision.detail === undefined ? undefined : new EgressRefusalDetail(decision.detail);
      throw new EgressRefused(`${hostOf(url)} ${decision.reason}`, { cause });
    }
    return this.pinnedAgent(decision.url.hostname, decision.addresses, streams);
  }

  /**
   * `streams`: the pool of the model streams, whose sockets buffer at most one chunk and say when
   * their bytes are parsed (`trackedConnector`): a paced stream (decision 063) stops reading its
   * socket, and what the provider sends meanwhile waits in the kernel to be read at once.
   */
  private pinnedAgent(hostname: string, addresses: readonly string[], streams: boolean): Agent {
    const key = `${streams ? 'streams ' : ''}${hostname} ${addresses.join(' ')}`;
    const cached = this.agents.get(key);
    if (cached !== undefined) {
      // Most recently used last: the first entry is the one to evict.
      this.agents.delete(key);
      this.agents.set(key, cached);
      return cached;
    }
    const ca = this.extraCa === undefined ? {} : { ca: [...rootCertificates, this.extraCa] };
    const connect = { lookup: pinnedLookup(hostname, addresses), ...ca };
    const agent = new Agent({ connect: streams ? trackedConnector({ ...connect, highWaterMark: 1 }) : connect });
    this.agents.set(key, agent);
    while (this.agents.size > MAX_PINNED_AGENTS) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, Agent];
      this.agents.delete(oldestKey);
      // Graceful: requests already dispatched on it finish first.
      void oldest.close().catch(() => undefined);
    }
    return agent;
  }
}

/**
 * A `dns.lookup` replacement that answers only the approved addresses of one host. Node calls it
 * with `all: true` when it tries several addresses (happy eyeballs), else for one address.
 */
function pinnedLookup(hostname: string, addresses: readonly string[]): LookupFunction {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    if (host !== bare) {
      callback(Object.assign(new Error(`egress: ${host} was not approved on this connection`), { code: 'ENOTFOUND' }), []);
      return;
    }
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => isIP(a) === options.family) : addresses;
    if (wanted.length === 0) {
      callback(Object.assign(new Error(`egress: no approved IPv${options.family} address for ${host}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    if (options.all === true) callback(null, wanted.map((address) => ({ address, family: isIP(address) })));
    else callback(null, wanted[0]!, isIP(wanted[0]!));
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the URL';
  }
}
