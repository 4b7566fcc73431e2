// Resolves the '@openbot/*' aliases in the compiled output: must stay the first import.
import '../../../apps/server/src/module-paths';
import { faultPointsFromEnv, type Json, type Workflow } from '@openbot/engine';
import { EngineNode } from '@openbot/engine/node';
import { Keyring, Sealer, SqlFailureRecorder } from '@openbot/platform';
import { createInterface } from 'node:readline';
import { Pool } from 'pg';
import { awaitWorkflow, inboxWorkflow } from './primitive-workflows';

/**
 * One engine node as a real process, for the system crash tests (REL-01). Run compiled:
 * `node dist/test/system/engine/engine-node.js` (`npm test` builds first).
 *
 * Environment: DATABASE_URL, NODE_ID, MASTER_KEY (base64, 32 bytes, shared by every node),
 * LEASE_SECONDS, COUNTER_URL (the test's counting service), OPENBOT_FAULTS (e.g.
 * `checkpoint.committed=kill@step:3`), SUBMIT=N (submit N executions at start), STEPS (phases per
 * execution, default 5), STEP_DELAY_MS (work time of each phase before its call, default 0),
 * SCHEDULE (a cron expression: upserts schedule `rel.schedule` of one-step executions at start),
 * SCHEDULE_POLL_MS (how often the node looks for due schedules, default 1000), DEAD_NODES (`off`: takeovers
 * wait for lease expiry; otherwise the dead-node grace in ms, default 1000).
 *
 * Protocol: one JSON object per line.
 * stdout: `{"ready": nodeId}`, `{"submitted": id}`, `{"decided": id, "state"}`,
 *   `{"claimed": id, "outcome": "started" | "busy" | "idle"}`, `{"runsEnded": nodeId}`, `{"error": message}`.
 * stdin: `{"submit": {"steps"?}}`, `{"decide": {"id", "decision", "result"?}}`,
 *   `{"submitWork": {"workflow", "input"}}` (answers `submittedWork`; primitive-workflows.ts),
 *   `{"signal": {"id", "name", "payload"?}}` (answers `signalled`), `{"pause": id}` and
 *   `{"resume": id}` (answer `pausedId` / `resumedId` with the engine's answer),
 *   `{"claim": [id, …]}` (claims each as a fetched recovery job would),
 *   `{"whenRunsEnd": true}` (answers `runsEnded` once this node runs no execution any more).
 * SIGTERM stops the engine gracefully and exits 0.
 */

const WORKFLOW = 'rel.steps';

interface StepsInput {
  [key: string]: Json;
  steps: number;
}

interface StepsState {
  [key: string]: Json;
  k: number;
  n: number;
  /** What the counting service answered for each phase, in order (from the call log when reused). */
  results: Json[];
}

function env(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
}

function say(line: Record<string, Json>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error(`phase aborted (${String(signal.reason)})`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const nodeId = env('NODE_ID');
const counterUrl = env('COUNTER_URL');
const defaultSteps = Number(env('STEPS', '5'));
/** Work time of each phase on this node (a node setting, so a slow owner and a fast successor can differ). */
const stepDelayMs = Number(env('STEP_DELAY_MS', '0'));

/** Phase n calls the counting service once through the call log; even phases are safe to repeat. */
const steps: Workflow<StepsState, StepsInput> = {
  name: WORKFLOW,
  initial: (input) => ({ k: input.steps, n: 0, results: [] }),
  next: (s) => (s.n < s.k ? { phase: 'step' } : { end: 'completed', result: { results: s.results } }),
  phases: {
    step: {
      async run(ctx) {
        const n = ctx.state.n + 1;
        await pause(stepDelayMs, ctx.signal);
        const result = await ctx.calls.call(`step-${n}`, { safe: n % 2 === 0 }, async (request) => {
          const res = await fetch(counterUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
            body: JSON.stringify({
              executionId: ctx.executionId,
              step: n,
              safe: n % 2 === 0,
              idempotencyKey: request.idempotencyKey,
              attempt: request.attempt,
              generation: ctx.generation,
              node: nodeId,
            }),
            signal: request.signal,
          });
          if (!res.ok) throw new Error(`counter answered ${res.status}`);
          return (await res.json()) as Json;
        });
        ctx.emit('rel.step', { step: n, result }, { step: n });
        return { state: { ...ctx.state, n, results: [...ctx.state.results, result] } };
      },
    },
  },
};

async function main(): Promise<void> {
  const databaseUrl = env('DATABASE_URL');
  const sealer = new Sealer(new Keyring({ id: 'test1', key: Buffer.from(env('MASTER_KEY'), 'base64') }));
  const pool = new Pool({ connectionString: databaseUrl, max: 10, application_name: `openbot engine ${nodeId}`, connectionTimeoutMillis: 5_000 });
  // An idle client whose connection dies (terminated backend, database restart) must not crash the node.
  pool.on('error', () => undefined);
  const engine = new EngineNode({
    pool,
    connectionString: databaseUrl,
    sealer,
    failures: new SqlFailureRecorder(sealer),
    nodeId,
    leaseSeconds: Number(env('LEASE_SECONDS', '3')),
    faults: faultPointsFromEnv(process.env, false),
    schedulePollMs: Number(env('SCHEDULE_POLL_MS', '1000')),
    deadNodes: env('DEAD_NODES', '1000') === 'off' ? false : { graceMs: Number(env('DEAD_NODES', '1000')) },
  });
  engine.register(steps);
  engine.register(inboxWorkflow);
  engine.register(awaitWorkflow);
  await engine.start();
  const schedule = process.env.SCHEDULE ?? '';
  if (schedule !== '') {
    // One-step executions (one unsafe call each) at every fire time of SCHEDULE.
    await engine.schedules.upsert({
      name: 'rel.schedule',
      cron: schedule,
      workflow: WORKFLOW,
      input: { steps: 1 },
      scope: { kind: 'service', id: '00000000-0000-7000-8000-0000000000aa', organizationId: null },
    });
  }
  say({ ready: nodeId, pid: process.pid });

  const submit = async (input: Partial<StepsInput> = {}): Promise<void> => {
    const { executionId } = await engine.submit({
      workflow: WORKFLOW,
      input: { steps: input.steps ?? defaultSteps },
      scope: { kind: 'service', id: '00000000-0000-7000-8000-0000000000aa', organizationId: null },
    });
    say({ submitted: executionId });
  };

  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    void engine
      .stop(2_000)
      .then(() => pool.end())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });

  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    void (async () => {
      const command = JSON.parse(line) as {
        submit?: Partial<StepsInput>;
        submitWork?: { workflow: string; input: Json };
        signal?: { id: string; name: string; payload?: Json };
        pause?: string;
        resume?: string;
        decide?: { id: string; decision: 'succeeded' | 'failed' | 'stop'; result?: Json };
        claim?: string[];
        whenRunsEnd?: boolean;
      };
      if (command.submit !== undefined) await submit(command.submit);
      if (command.submitWork !== undefined) {
        const { executionId } = await engine.submit({ ...command.submitWork, scope: { kind: 'service', id: '00000000-0000-7000-8000-0000000000aa', organizationId: null } });
        say({ submittedWork: executionId, workflow: command.submitWork.workflow });
      }
      if (command.pause !== undefined) say({ pausedId: command.pause, ...((await engine.pause(command.pause)) ?? {}) });
      if (command.resume !== undefined) say({ resumedId: command.resume, ...((await engine.resume(command.resume)) ?? {}) });
      if (command.signal !== undefined) {
        const { id, name, payload } = command.signal;
        say({ signalled: id, stored: await engine.signal(id, name, payload ?? null) });
      }
      if (command.claim !== undefined) {
        // Exactly what this node does when it fetches a recovery job of each execution (the
        // runner's claim), now: lets a test make two processes claim the same execution at once.
        const runner = (engine as unknown as { runner: { advance(id: string, fromJob: boolean): Promise<string> } }).runner;
        await Promise.all(command.claim.map(async (id) => say({ claimed: id, outcome: await runner.advance(id, true) })));
      }
      if (command.whenRunsEnd === true) {
        // A run this node lost ends on its own (its checkpoint is fenced); the test waits for that.
        const runner = engine as unknown as { runner: { localRuns: number } };
        while (runner.runner.localRuns > 0) await new Promise((r) => setTimeout(r, 50));
        say({ runsEnded: nodeId });
      }
      if (command.decide !== undefined) {
        const { id, decision, result } = command.decide;
        const outcome = await engine.decide(id, decision === 'succeeded' ? { decision, result: result ?? null } : { decision });
        say({ decided: id, state: outcome?.state ?? null });
      }
    })().catch((error: unknown) => say({ error: error instanceof Error ? error.message : String(error) }));
  });

  const count = Number(process.env.SUBMIT ?? '0');
  for (let i = 0; i < count; i++) await submit();
}

main().catch((error: unknown) => {
  process.stderr.write(`engine-node ${process.env.NODE_ID ?? '?'} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
