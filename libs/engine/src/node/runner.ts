import { isFinal } from '@openbot/domain';
import type { EngineContext } from '../run/context';
import { runProgram, type LocalRun } from '../run/program';
import { deliverSignal } from '../run/signal-delivery';
import { ADVANCE_QUEUE, enqueueAdvance, type AdvanceJob } from '../base/queue';
import { identityOf } from '../run/identity-guard';
import type { ExecutionRow } from '../base/store';
import { endedAmong, renewLeases, selectExecution, selectForClaim, takeOver } from '../sql/executions';
import { timerDue } from '../run/transitions';
import type { Queryable } from '../base/ports';
import { isNodePresent } from './presence';
import { withTransaction } from '../base/tx';
import * as executionSql from '../sql/executions';

/**
 * The runner (EXE-08): claims executions (takeover adds one to the generation under the row
 * lock, EXE-03), runs them in-process while this node holds the lease, renews leases, closes
 * the phase gate of runs it lost, and hands its leases back when the node stops.
 * pg-boss jobs only carry `{ executionId }` and only decide *when* someone looks; the
 * generation decides who may write.
 */
export class Runner {
  private readonly runs = new Map<string, LocalRun>();
  private readonly claims = new Map<string, Promise<'started' | 'busy' | 'idle'>>();
  private readonly finished = new Set<() => void>();
  /**
   * Executions a claim found still running here, though they may have saved a waiting state
   * already: the run has committed its wait but not yet left `runs`. A wake-up in that moment
   * (a signal, a resume, a child's end) queues the execution and its job, and both claims
   * answer 'busy'; the run, once it has left, claims it again instead of leaving it queued until
   * the recovery job (a lease later).
   */
  private readonly wokenWhileHere = new Set<string>();
  private renewTimer: NodeJS.Timeout | null = null;
  private accepting = false;

  constructor(private readonly ctx: EngineContext) {}

  get localRuns(): number {
    return this.runs.size;
  }

  start(): void {
    this.accepting = true;
    const every = Math.max(200, (this.ctx.leaseSeconds * 1000) / 3);
    this.renewTimer = setInterval(() => void this.renew(), every);
    this.renewTimer.unref();
    this.ctx.listener.onSignal((id) => {
      // Only the node running it acts; for idle executions the signal's own job does the waking.
      const run = this.runs.get(id);
      if (run) void deliverSignal(this.ctx, run).catch(() => undefined);
    });
  }

  /** Runs an execution this node just created and owns at generation 1 (no claim needed). */
  runOwned(row: ExecutionRow): void {
    if (!this.accepting || this.runs.has(row.id)) return;
    // Nothing ran yet: this node's readers of it can start from memory (decision 061).
    this.ctx.listener.track(row.id);
    this.launch(row, row.generation);
  }

  /**
   * Tries to claim and run an execution: from a queue job, a signal, or a local wake-up.
   * Never runs one twice in this process; never takes one whose lease another node holds.
   */
  async advance(executionId: string, fromJob = false, deadOwner?: string): Promise<'started' | 'busy' | 'idle'> {
    // Claims of one execution in this process run one after another: a claim overlapping another
    // (two jobs in one batch, a local wake-up and its job) would take it over a second time and
    // fence the run the first one just started.
    const mine = (this.claims.get(executionId) ?? Promise.resolve('idle' as const))
      .catch(() => undefined)
      .then(() => this.claim(executionId, fromJob, deadOwner));
    this.claims.set(executionId, mine);
    try {
      return await mine;
    } finally {
      if (this.claims.get(executionId) === mine) this.claims.delete(executionId);
    }
  }

  /** `deadOwner`: the node the dead-node watch found absent; its lease no longer keeps the execution. */
  private async claim(executionId: string, fromJob: boolean, deadOwner?: string): Promise<'started' | 'busy' | 'idle'> {
    if (!this.accepting) return 'busy';
    if (this.runs.has(executionId) && !fromJob) return this.wokenHere(executionId);
    const claimed = await withTransaction(this.ctx.pool, async (tx) => {
      const row = await selectForClaim(tx, executionId);
      if (!row || isFinal(row.state) || row.state === 'outcome_unknown') return 'idle' as const;
      // A waiting execution is woken by a signal or child notice (which queue it), or by its due timer here.
      if (row.state === 'waiting' && !(await timerDue(this.ctx, tx, executionId))) return 'idle' as const;
      const ownerGone = row.leased && row.owner_node !== this.ctx.nodeId && (await this.ownerIsGone(tx, row, deadOwner));
      if (row.leased && row.owner_node !== this.ctx.nodeId && !ownerGone) {
        // Someone holds it. A recovery job looks again when that lease would have run out;
        // other callers (signals, wake-ups) leave it to the holder.
        if (fromJob) await enqueueAdvance(this.ctx.boss, tx, executionId, this.ctx.leaseSeconds + 1);
        return 'busy' as const;
      }
      if (this.runs.has(executionId)) {
        // This node runs it: the recovery job that found it here is re-armed, or a later crash
        // of this node would leave the execution with no job to recover it.
        if (fromJob) await enqueueAdvance(this.ctx.boss, tx, executionId, this.ctx.leaseSeconds + 1);
        return this.wokenHere(executionId);
      }
      const taken = await takeOver(tx, executionId, this.ctx.nodeId, this.ctx.leaseSeconds);
      // The recovery job of this lease: fires after it would expire, finds the run ended or re-arms.
      await enqueueAdvance(this.ctx.boss, tx, executionId, this.ctx.leaseSeconds * 2);
      // Another node's work taken: its owner was found dead, or its lease ran out (a lease handed
      // back at shutdown counts as run out too: both wait for no one). Counted after the commit.
      const cause = ownerGone ? ('dead_node' as const) : row.owner_node !== null && row.owner_node !== this.ctx.nodeId ? ('lease_expired' as const) : null;
      return { ...row, generation: taken.generation, state: taken.state, takeoverCause: cause };
    });
    if (claimed === 'idle' || claimed === 'busy') return claimed;
    if (claimed.takeoverCause !== null) this.ctx.metrics.takeover(claimed.takeoverCause);
    if (this.runs.has(executionId)) return this.wokenHere(executionId);
    if (!this.accepting) return 'busy';
    this.launch(claimed, claimed.generation);
    return 'started';
  }

  /**
   * A leased execution may be taken before its lease runs out only when the watch found its owner
   * absent and it is still absent now, under the row lock (an owner back in time keeps its work).
   */
  private async ownerIsGone(tx: Queryable, row: ExecutionRow, deadOwner: string | undefined): Promise<boolean> {
    return deadOwner !== undefined && row.owner_node === deadOwner && !(await isNodePresent(tx, deadOwner));
  }

  /** A claim found the execution running here: 'busy', and the run claims it again once it has left. */
  private wokenHere(executionId: string): 'busy' {
    this.wokenWhileHere.add(executionId);
    return 'busy';
  }

  /** Handles a batch of queue jobs: each claim is short; the runs go on in the background. */
  async onJobs(jobs: ReadonlyArray<{ data: AdvanceJob }>): Promise<void> {
    // Most recovery jobs come due after their execution ended: one plain read of the batch answers
    // them, without the row lock (a WAL record and a flush) of a claim. A final state never changes.
    const ended = await endedAmong(this.ctx.pool, jobs.map((job) => job.data.executionId));
    const live = jobs.filter((job) => !ended.has(job.data.executionId));
    const outcomes = await Promise.allSettled(live.map((job) => this.advance(job.data.executionId, true)));
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    // A claim that failed (the database was unreachable) must not consume its job: pg-boss
    // retries the batch, and claims are idempotent, so the execution is never left without one.
    if (failed) throw failed.reason;
  }

  /**
   * Graceful stop: no new claims; running phases may reach their checkpoint within `drainMs`;
   * then the gates close, and leases are handed back with an immediate job so another node
   * takes over at once instead of waiting for expiry.
   */
  async stop(drainMs: number): Promise<void> {
    this.accepting = false;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    for (const run of this.runs.values()) run.draining = true;
    await this.waitIdle(drainMs);
    for (const run of this.runs.values()) {
      run.scope?.closeGate('shutdown');
      run.abort.abort('shutdown');
    }
    await this.waitIdle(5_000);
    await this.releaseLeases();
  }

  private launch(row: ExecutionRow, generation: number): void {
    const run: LocalRun = {
      id: row.id,
      generation,
      scope: null,
      draining: !this.accepting,
      lost: false,
      abort: new AbortController(),
      identity: identityOf(row),
      scopeKind: row.scope_kind,
      identityInvalid: null,
    };
    this.runs.set(row.id, run);
    void runProgram(this.ctx, run, { ...row, generation })
      .catch(() => {
        // Storage stayed unreachable past the retry budget: the lease runs out and another
        // claim (the recovery job) resumes from the last checkpoint.
        run.lost = true;
      })
      .finally(() => {
        this.runs.delete(row.id);
        // Woken while it was leaving: claimed again now (an execution still running or waiting answers idle).
        if (this.wokenWhileHere.delete(row.id)) void this.advance(row.id).catch(() => undefined);
        for (const done of [...this.finished]) done();
      });
  }

  private async renew(): Promise<void> {
    const owned = [...this.runs.values()].filter((r) => !r.lost);
    if (owned.length === 0) return;
    let still: Set<string>;
    try {
      still = await renewLeases(this.ctx.pool, this.ctx.nodeId, owned, this.ctx.leaseSeconds);
    } catch {
      return; // the database is unreachable: checkpoints will tell, and the lease may run out
    }
    for (const run of owned) {
      if (!still.has(run.id) && !run.lost && this.runs.get(run.id) === run) {
        // Lost to another owner, or the run ended between the list and the update.
        const row = await selectExecution(this.ctx.pool, run.id).catch(() => null);
        if (row && !isFinal(row.state) && row.generation !== run.generation) {
          run.lost = true;
          run.scope?.closeGate('lease-lost');
          run.abort.abort('lease-lost');
        }
      }
    }
  }

  private waitIdle(ms: number): Promise<void> {
    if (this.runs.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      // eslint-disable-next-line @typescript-eslint/no-this-alias -- `done` is a hoisted function declaration that removes itself from `finished`
      const self = this;
      function done(): void {
        if (self.runs.size > 0 && Date.now() < deadline) return;
        clearTimeout(timer);
        self.finished.delete(done);
        resolve();
      }
      const deadline = Date.now() + ms;
      this.finished.add(done);
    });
  }

  private async releaseLeases(): Promise<void> {
    await withTransaction(this.ctx.pool, async (tx) => {
      const { rows } = await tx.query<{ id: string }>({
        ...executionSql.releaseLeases,
        values: [this.ctx.nodeId],
      });
      for (const row of rows) await enqueueAdvance(this.ctx.boss, tx, row.id);
    }).catch(() => undefined);
  }
}

export { ADVANCE_QUEUE };
