import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { startS3Server, type S3Server } from '../support/s3-server';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { ADMIN_TOKEN, expectApi, startServerNode, stopAllServerNodes, type ServerNode } from './chat/server-node';

jest.setTimeout(120_000);

let db: TestDatabase | null = null;
let s3: S3Server | null = null;

beforeAll(async () => {
  [db, s3] = await Promise.all([createTestDatabase(), startS3Server()]);
});

afterAll(async () => {
  await stopAllServerNodes();
  await s3?.stop();
  await db?.drop().catch(() => undefined);
});

/** One socket of the process: its local and remote port, as /proc/<pid>/net shows them. */
interface Socket {
  readonly proto: string;
  readonly localPort: number;
  readonly remotePort: number;
  readonly listening: boolean;
}

/**
 * The sockets the process holds open now: its fd links name their inodes, and
 * /proc/<pid>/net/{tcp,tcp6,udp,udp6} give each inode's addresses (Linux).
 */
function socketsOf(pid: number): Socket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (link) inodes.add(link[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const out: Socket[] = [];
  for (const proto of ['tcp', 'tcp6', 'udp', 'udp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${proto}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const port = (address: string): number => parseInt(address.split(':')[1]!, 16);
      // TCP state 0A is LISTEN; an unconnected UDP socket has remote port 0.
      out.push({ proto, localPort: port(f[1]!), remotePort: port(f[2]!), listening: proto.startsWith('tcp') ? f[3] === '0A' : port(f[2]!) === 0 });
    }
  }
  return out;
}

/**
 * A deployment needs only PostgreSQL and an object store (PLAT-03): a real `openbot serve`
 * process given a database URL and an S3 endpoint (s3rver on loopback) and nothing else starts,
 * serves an organization's files end to end, and every connection it opens on its own goes to
 * one of those two: no cache, queue, broker, secret store or other service is reached.
 */
describe('[PLAT-03] the services a deployment needs', () => {
  it('[PLAT-03] a server with only PostgreSQL and an S3 object store is ready and serves files; every socket it opens goes to one of the two', async () => {
    const pgPort = Number(new URL(db!.url).port);
    const s3Port = Number(new URL(s3!.env.S3_ENDPOINT!).port);
    const node: ServerNode = await startServerNode({ databaseUrl: db!.url, nodeId: 'plat-03', leaseSeconds: 15, env: { ...s3!.env } });
    const pid = node.child.pid!;
    const apiPort = Number(new URL(node.base).port);
    const seen: Socket[] = [];
    const sample = (): void => {
      seen.push(...socketsOf(pid));
    };
    // Sampled while the node starts its background work and serves the requests below.
    const sampler = setInterval(sample, 20);
    try {
      sample();
      const org = await expectApi<{ apiKey: { secret: string } }>(201, node, 'POST', '/v1/organizations', { token: ADMIN_TOKEN, body: { name: 'Services' } });
      const secret = org.apiKey.secret;
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('only two services')], { type: 'text/plain' }), 'note.txt');
      const uploaded = await fetch(`${node.base}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
      expect(uploaded.status).toBe(201);
      const file = (await uploaded.json()) as { id: string };
      const content = await fetch(`${node.base}/v1/files/${file.id}/content`, { headers: { authorization: `Bearer ${secret}` } });
      expect(await content.text()).toBe('only two services');
      await expectApi(202, node, 'DELETE', `/v1/files/${file.id}`, { token: secret });
      sample();
    } finally {
      clearInterval(sampler);
    }
    // The samples saw the node's own connections to both services.
    const outgoing = seen.filter((s) => !s.listening && s.localPort !== apiPort);
    expect(new Set(outgoing.filter((s) => s.proto.startsWith('tcp')).map((s) => s.remotePort))).toEqual(new Set([pgPort, s3Port]));
    // Nothing else: no other TCP peer, and no UDP peer (no DNS or other lookups either).
    expect(outgoing.filter((s) => s.remotePort !== pgPort && s.remotePort !== s3Port)).toEqual([]);
    // It listens on its API port only (no second listener for another protocol).
    expect([...new Set(seen.filter((s) => s.listening && s.proto.startsWith('tcp')).map((s) => s.localPort))]).toEqual([apiPort]);
  });
});
