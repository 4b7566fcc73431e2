import type { Engine, ExecutionView, Json, Workflow } from '@openbot/engine';
import type { ExecutionState } from '@openbot/domain';
import type { Pool } from 'pg';
import type { TestDatabase } from '../../support/test-database';

/** Scopes for submitted commands (scope IDs are UUIDs). */
export const SERVICE = { kind: 'service', id: '00000000-0000-7000-8000-0000000000a1', organizationId: null } as const;
export const MEMBER = { kind: 'member', id: '00000000-0000-7000-8000-0000000000b1', organizationId: null } as const;

/** The state of a one-phase workflow: whether its phase ran. */
export interface OnePhaseState {
  [key: string]: Json;
  done: boolean;
}

/** What a one-phase workflow's phase is given. */
export type OnePhaseContext = Parameters<Workflow<OnePhaseState, null>['phases'][string]['run']>[0];

/** A workflow of one phase that runs `body`, then completes with no end work (the one-statement end). */
export function onePhase(name: string, phase: string, body: (ctx: OnePhaseContext) => Promise<void>): Workflow<OnePhaseState, null> {
  return {
    name,
    initial: () => ({ done: false }),
    next: (s) => (s.done ? { end: 'completed', result: null } : { phase }),
    phases: {
      [phase]: {
        async run(ctx) {
          await body(ctx);
          return { state: { done: true } };
        },
      },
    },
  };
}

/** The state of `twoSteps`: how many of its phases ran. */
export interface CountState {
  [key: string]: Json;
  n: number;
}

/**
 * A workflow of two `step` phases that completes with result 2 and no end work. Plain, its last
 * phase is saved by the one-statement end (decision 056); with `emit`, each phase emits
 * `test.counted`, so the last one is checkpointed before the end.
 */
export function twoSteps(name: string, options: { emit?: boolean } = {}): Workflow<CountState, null> {
  return {
    name,
    initial: () => ({ n: 0 }),
    next: (s) => (s.n < 2 ? { phase: 'step' } : { end: 'completed', result: s.n }),
    phases: {
      step: {
        async run({ state, emit }) {
          if (options.emit === true) emit('test.counted', { n: state.n + 1 });
          return { state: { n: state.n + 1 } };
        },
      },
    },
  };
}

/** A promise with its resolve/reject in hand (a phase or fault that waits for the test). */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Polls `check` until it answers a truthy value, with a generous deadline (no timed assertion:
 * the deadline only turns a hang into a readable failure).
 */
export async function eventually<T>(check: () => Promise<T> | T, what: string, timeoutMs = 40_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${String(last instanceof Error ? last.message : JSON.stringify(last))})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the execution is in one of `states` and answers its view. */
export async function waitForState(engine: Engine, executionId: string, states: readonly ExecutionState[], timeoutMs?: number): Promise<ExecutionView> {
  return eventually(
    async () => {
      const view = await engine.get(executionId);
      return view && states.includes(view.state) ? view : null;
    },
    `execution ${executionId} to be ${states.join('|')}`,
    timeoutMs,
  );
}

/** The raw execution row, as the database has it. */
export async function executionRow(db: TestDatabase, id: string): Promise<Record<string, unknown>> {
  const [row] = await db.query('SELECT * FROM executions WHERE id = $1', [id]);
  if (!row) throw new Error(`no execution ${id}`);
  return row;
}

/** The number of phase runs this node still has in memory (read-only peek at the runner). */
export function localRuns(engine: Engine): number {
  return (engine as unknown as { runner: { localRuns: number } }).runner.localRuns;
}

/**
 * Makes the current owner's lease run out and lets `to` claim the execution (a takeover): expires
 * the lease in the database (judged by the database's clock, as the engine does) and hands `to`'s
 * runner the execution's recovery job, as its pg-boss worker would. The old owner keeps renewing
 * its lease while it still holds the generation, so this repeats until the generation moved past
 * `generation`.
 */
export async function forceTakeover(db: TestDatabase, to: Engine, executionId: string, generation: number): Promise<ExecutionView> {
  const runner = (to as unknown as { runner: { onJobs(jobs: ReadonlyArray<{ data: { executionId: string } }>): Promise<void> } }).runner;
  return eventually(
    async () => {
      await db.query(`UPDATE executions SET lease_until = now() - interval '1 second' WHERE id = $1 AND generation = $2`, [executionId, generation]);
      await runner.onJobs([{ data: { executionId } }]);
      const view = await to.get(executionId);
      return view && view.generation > generation ? view : null;
    },
    `a takeover of ${executionId} past generation ${generation}`,
  );
}

/** A counter standing for an outside service. */
export class OutsideService<R extends Json = Json> {
  readonly requests: Array<{ idempotencyKey: string; attempt: number; from: string }> = [];
  constructor(private readonly answer: (request: { idempotencyKey: string; attempt: number; from: string }, n: number) => Promise<R> | R) {}

  get calls(): number {
    return this.requests.length;
  }

  async send(request: { idempotencyKey: string; attempt: number }, from: string): Promise<R> {
    const entry = { idempotencyKey: request.idempotencyKey, attempt: request.attempt, from };
    this.requests.push(entry);
    return this.answer(entry, this.requests.length);
  }
}

/**
 * The names of the named statements `pool.query` runs from now on (a spy, restored by
 * `jest.restoreAllMocks()`); with `executionId`, only those whose first value is that ID.
 * Statements a checked-out client runs (inside a transaction) are not seen.
 */
export function poolStatements(pool: Pool, executionId?: string): () => string[] {
  const query = jest.spyOn(pool, 'query');
  return () =>
    query.mock.calls
      .map(([config]) => (typeof config === 'object' && config !== null ? (config as { name?: string; values?: unknown[] }) : {}))
      .filter((config) => {
        const first = config.values?.[0];
        return executionId === undefined || first === executionId || (Array.isArray(first) && first.includes(executionId));
      })
      .map((config) => config.name ?? '');
}
