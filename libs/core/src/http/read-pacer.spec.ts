import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { BodyChunks } from './body-chunks';
import { ReadPacer, type HeldStream } from './read-pacer';
import { parsingSocket, trackedConnector } from './socket-reads';
import { undiciPost } from './streaming-post';

const WRITES = 100;

/** Answers every POST with `first`, then WRITES small writes 2 ms apart, as a provider streams tokens. */
async function tokenServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('first;');
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`${sent};`);
        sent += 1;
        if (sent === WRITES) {
          clearInterval(timer);
          res.end();
        }
      }, 2);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('model stream reads paced while the node is busy', () => {
  let server: Server;
  let url: string;
  // Sockets that buffer one chunk and say when their bytes are parsed, as the egress client's model-stream pools do.
  const agent = new Agent({ connect: trackedConnector({ timeout: 10_000, highWaterMark: 1 }) });

  beforeAll(async () => ({ server, url } = await tokenServer()));
  afterAll(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('a refused connection fails the request with its error; the connector throws nothing of its own', async () => {
    const closed = await tokenServer();
    await new Promise((resolve) => closed.server.close(resolve));
    await expect(undiciPost(agent)(closed.url, { headers: {}, body: '{}', signal: new AbortController().signal })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('reads the first chunk at once and what arrives later in a few event-loop turns, losing nothing', async () => {
    const pacer = new ReadPacer(50, 1);
    const answer = await undiciPost(agent)(url, { headers: {}, body: '{}', signal: new AbortController().signal });
    const chunks = new BodyChunks(answer.body, pacer);
    const first = await chunks.next();
    expect(Buffer.from(first!).toString()).toBe('first;');
    chunks.pace();
    // The event-loop turn each chunk arrives in: a held stream's tokens wait in the kernel and
    // arrive together; read as they come, each of the 100 writes would arrive in a turn of its own.
    let turn = 0;
    let counting = true;
    const count = (): void => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const turns = new Set<number>();
    let text = '';
    for (let chunk = await chunks.next(); chunk !== null; chunk = await chunks.next()) {
      text += Buffer.from(chunk).toString();
      turns.add(turn);
    }
    counting = false;
    chunks.close();
    expect(text).toBe(Array.from({ length: WRITES }, (_, i) => `${i};`).join(''));
    // 100 writes over about 200 ms: about four ticks of 50 ms, each reading what arrived meanwhile.
    expect(turns.size).toBeLessThan(WRITES / 3);
  });

  it('holds only while enough streams are open, and not during the reads of the tick that resumed them', async () => {
    const pacer = new ReadPacer(20, 2);
    pacer.started();
    expect(pacer.holding).toBe(false);
    pacer.started();
    expect(pacer.holding).toBe(true);
    const resumed = await new Promise<boolean>((resolve) => pacer.atNextTick({ resume: () => resolve(pacer.holding), again: () => undefined }));
    expect(resumed).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pacer.holding).toBe(true);
    pacer.ended();
    expect(pacer.holding).toBe(false);
    pacer.ended();
  });

  it('follows the operator\'s settings, and an interval of 0 means no pacer: every chunk is read as it comes', () => {
    expect(ReadPacer.configured(0, 8)).toBeUndefined();
    const pacer = ReadPacer.configured(40, 3);
    expect(pacer).toBeInstanceOf(ReadPacer);
    expect([pacer!.intervalMs, pacer!.fromStreams]).toEqual([40, 3]);
  });

  it('stops the socket\'s reads once the tick\'s reads are over: what the provider sends meanwhile stays in the kernel until the next tick', async () => {
    let respond: ((text: string) => void) | undefined;
    const controlled = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('first;');
        respond = (text) => (text === '' ? res.end() : res.write(text));
      });
    });
    await new Promise<void>((resolve) => controlled.listen(0, '127.0.0.1', resolve));
    const holds: number[] = [];
    const pacer = new (class extends ReadPacer {
      override atNextTick(held: HeldStream): void {
        holds.push(performance.now());
        super.atNextTick(held);
      }
    })(200, 1);
    try {
      const answer = await undiciPost(agent)(`http://127.0.0.1:${(controlled.address() as AddressInfo).port}/`, { headers: {}, body: '{}', signal: new AbortController().signal });
      const chunks = new BodyChunks(answer.body, pacer);
      let socket: import('node:net').Socket | null = null;
      answer.body.on('data', () => (socket ??= parsingSocket()));
      expect(Buffer.from((await chunks.next())!).toString()).toBe('first;');
      expect(socket).not.toBeNull();
      chunks.pace();
      // Read while the node is busy: held until the tick, which then holds it again with its socket stopped.
      respond!('a;');
      expect(Buffer.from((await chunks.next())!).toString()).toBe('a;');
      while (holds.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const before = socket!.bytesRead;
      respond!('b;');
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(socket!.bytesRead).toBe(before);
      // The next tick reads it.
      expect(Buffer.from((await chunks.next())!).toString()).toBe('b;');
      expect(socket!.bytesRead).toBeGreaterThan(before);
      respond!('');
      expect(await chunks.next()).toBeNull();
      chunks.close();
    } finally {
      await new Promise((resolve) => controlled.close(resolve));
    }
  });
});
