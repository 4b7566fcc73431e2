import { AnswerTooLarge, readCappedText } from '@openbot/core';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressClient, EgressRefused } from './egress-client';
import { EgressPolicy, REFUSED_DESTINATION, type HostLookup } from './egress-policy';

/** A loopback HTTP server that counts what reaches it. */
interface CountingServer {
  readonly requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

async function countingServer(host: string, port: number, answer: string, requests: IncomingHttpHeaders[] = []): Promise<CountingServer & { port: number }> {
  const server: Server = createServer((req, res) => {
    requests.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    requests,
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers `first` once, then `next` for ever: a TTL-0 name rebinding to an internal address. */
function rebindingLookup(first: string, next: string): HostLookup & { calls: number } {
  const lookup = Object.assign(
    (): Promise<{ address: string; family: number }[]> => {
      lookup.calls += 1;
      return Promise.resolve([{ address: lookup.calls === 1 ? first : next, family: 4 }]);
    },
    { calls: 0 },
  );
  return lookup;
}

const LIMITS = { toolAnswerBytes: 1024 * 1024, documentBytes: 64 * 1024 };

/**
 * DNS rebinding (decision 016). The name is `localhost` on purpose: a client that resolves the
 * host again when it connects (what the global `fetch` did) gets the system's answer, 127.0.0.1,
 * and reaches the internal server. The policy's scripted first answer is 127.0.0.2, the one
 * address the allow list admits: standing in for a public address, yet connectable without a network.
 */
describe('EgressClient', () => {
  const servers: CountingServer[] = [];
  let internal: CountingServer & { port: number };
  let approved: CountingServer;
  let client: EgressClient | undefined;

  beforeEach(async () => {
    internal = await countingServer('127.0.0.1', 0, 'internal secrets');
    servers.push(internal);
    // The same port on the IPv6 loopback, in case the system resolves localhost to ::1 first.
    await countingServer('::1', internal.port, 'internal secrets', internal.requests).then(
      (v6) => servers.push(v6),
      () => undefined, // no IPv6 loopback here
    );
    approved = await countingServer('127.0.0.2', internal.port, 'public answer');
    servers.push(approved);
  });

  afterEach(async () => {
    await client?.close();
    for (const server of servers.splice(0)) await server.close();
  });

  it('security: a name that answers an allowed address, then 127.0.0.1, never reaches the loopback server', async () => {
    const lookup = rebindingLookup('127.0.0.2', '127.0.0.1');
    client = new EgressClient(new EgressPolicy(['127.0.0.2'], lookup), LIMITS);
    const url = `http://localhost:${internal.port}/tool`;

    const first = await client.fetch(url, { method: 'POST', body: '{}' });
    expect(await first.text()).toBe('public answer');
    // Connected to the checked address; the Host header still names the original host.
    expect(approved.requests).toEqual([expect.objectContaining({ host: `localhost:${internal.port}` })]);

    // The second check sees the rebound answer and refuses; nothing is sent.
    const refusal = await client.fetch(url, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(EgressRefused);
    expect(internal.requests).toHaveLength(0);
    // One resolution per request, by the policy: the connection never resolved the name again.
    expect(lookup.calls).toBe(2);
  });

  it('security: the refusal text does not name the resolved address; its cause (sealed by the caller) does', async () => {
    client = new EgressClient(new EgressPolicy([], rebindingLookup('10.1.2.3', '10.1.2.3')), LIMITS);
    const refusal = (await client.fetch('http://wiki.corp.example/').catch((e: unknown) => e)) as EgressRefused;
    expect(refusal).toBeInstanceOf(EgressRefused);
    expect(refusal.message).toBe(`wiki.corp.example ${REFUSED_DESTINATION}`);
    expect(refusal.message).not.toContain('private');
    expect((refusal.cause as Error).message).toContain('10.1.2.3');
  });

  it('does not follow redirects: the redirect answer is returned as it is', async () => {
    const redirecting = createServer((_req, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.2', resolve));
    try {
      client = new EgressClient(new EgressPolicy(['127.0.0.2'], rebindingLookup('127.0.0.2', '127.0.0.2')), LIMITS);
      const response = await client.fetch(`http://redirect.example:${(redirecting.address() as AddressInfo).port}/`);
      expect(response.status).toBe(302);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });

  it('repeated requests to an unchanged answer reuse the pinned pool and still reach only the approved address', async () => {
    const lookup = rebindingLookup('127.0.0.2', '127.0.0.2');
    client = new EgressClient(new EgressPolicy(['127.0.0.2'], lookup), LIMITS);
    for (let i = 0; i < 3; i++) await (await client.fetch(`http://models.example:${internal.port}/`)).text();
    expect(approved.requests).toHaveLength(3);
    expect(internal.requests).toHaveLength(0);
  });

  it('an answer read with the cap fails clearly when the server sends more', async () => {
    client = new EgressClient(new EgressPolicy(['127.0.0.2'], rebindingLookup('127.0.0.2', '127.0.0.2')), LIMITS);
    const response = await client.fetch(`http://tool.example:${internal.port}/`);
    await expect(readCappedText(response, 4)).rejects.toBeInstanceOf(AnswerTooLarge);
  });
});
