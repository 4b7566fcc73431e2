/**
 * The clients of the `observers` workload (bench/observers.bench.ts), in a process of their own so
 * that their CPU is measured apart from the server's. Reads one JSON line on stdin:
 * `{ base, secret, executionIds, perTurn, stalled }`. Opens `perTurn` SSE streams on every
 * execution, plus `stalled` streams that connect and never read, and prints `connected` once
 * every stream has its response. A second line, `released <epoch ms>`, says the model streams
 * started then: from then on every event stored at or after that time counts (earlier ones are
 * what a stream read when it connected, not a delivery). Prints one JSON line when every reading
 * stream saw `execution.ended`: the number of events counted, p50 and p99 of their delivery lag
 * (receipt − the event's stored `at`, ms), also by event type, streams that failed, and this process's CPU seconds.
 */
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';

interface Job {
  readonly base: string;
  readonly secret: string;
  readonly executionIds: readonly string[];
  readonly perTurn: number;
  readonly stalled: number;
}

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });

/** When the model streams started (epoch ms); events stored before it are not deliveries. */
let releasedAt = Number.POSITIVE_INFINITY;
/** Lags by event type: the stream's own events and the ones its execution's commits carry differ. */
const lagsByType = new Map<string, number[]>();
/** Lags by the whole second after release in which the event was stored: the start and end bursts apart from the streaming. */
const lagsBySecond = new Map<number, number[]>();

function follow(job: Job, executionId: string, lags: number[], opened: () => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      `${job.base}/v1/executions/${executionId}/events`,
      { method: 'GET', agent, headers: { authorization: `Bearer ${job.secret}`, accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`HTTP ${res.statusCode}`));
        }
        opened();
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (piece: string) => {
          const now = Date.now();
          buffer += piece;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const dataLine = block.split('\n').find((line) => line.startsWith('data: '));
            if (dataLine === undefined) continue;
            const event = JSON.parse(dataLine.slice(6)) as { type?: string; at?: string };
            if (event.at !== undefined && Date.parse(event.at) >= releasedAt) {
              const lag = now - Date.parse(event.at);
              lags.push(lag);
              const typed = lagsByType.get(event.type ?? '') ?? [];
              typed.push(lag);
              lagsByType.set(event.type ?? '', typed);
              const second = Math.floor((Date.parse(event.at) - releasedAt) / 1000);
              const inSecond = lagsBySecond.get(second) ?? [];
              inSecond.push(lag);
              lagsBySecond.set(second, inSecond);
            }
            if (event.type === 'execution.ended') {
              req.destroy();
              return resolve();
            }
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', (error) => (error.message.includes('socket hang up') ? resolve() : reject(error)));
    req.end();
  });
}

/** A stream that connects and never reads: the server's writes back up into its socket. */
function stall(job: Job, executionId: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${job.base}/v1/executions/${executionId}/events`, { method: 'GET', agent, headers: { authorization: `Bearer ${job.secret}`, accept: 'text/event-stream' } }, (res) => {
      res.pause();
      res.socket.pause();
      resolve(res);
    });
    req.on('error', reject);
    req.end();
  });
}

async function run(job: Job): Promise<void> {
  const lags: number[] = [];
  const started = process.cpuUsage();
  const stalled = await Promise.all(Array.from({ length: job.stalled }, (_, i) => stall(job, job.executionIds[i % job.executionIds.length]!)));
  let waiting = job.executionIds.length * job.perTurn;
  const opened = (): void => {
    if (--waiting === 0) process.stdout.write('connected\n');
  };
  const outcomes = await Promise.allSettled(job.executionIds.flatMap((id) => Array.from({ length: job.perTurn }, () => follow(job, id, lags, opened))));
  const failed = outcomes.filter((o) => o.status === 'rejected').length;
  const cpu = process.cpuUsage(started);
  for (const res of stalled) res.destroy();
  const pct = (values: number[], p: number): number => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? Number.NaN;
  const byType = Object.fromEntries([...lagsByType].map(([type, values]) => [type, { n: values.length, p50: pct(values, 50), p99: pct(values, 99) }]));
  const bySecond = Object.fromEntries([...lagsBySecond].sort(([a], [b]) => a - b).map(([second, values]) => [second, { n: values.length, p50: pct(values, 50), p99: pct(values, 99) }]));
  const summary = { events: lags.length, p50: pct(lags, 50), p99: pct(lags, 99), failed, cpuS: (cpu.user + cpu.system) / 1e6, byType, bySecond };
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(summary)}\n`, () => resolve()));
}

const lines = createInterface({ input: process.stdin });
lines.once('line', (line) => {
  lines.on('line', (next) => {
    if (next.startsWith('released ')) releasedAt = Number(next.slice('released '.length));
  });
  run(JSON.parse(line) as Job).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`clients failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
});
