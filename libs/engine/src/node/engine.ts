import { randomUUID } from 'node:crypto';
import { noEngineMetrics } from '../base/metrics';
import { noEngineTracing } from '../base/tracing';
import { Conflict, newId, type ExecutionId, type ExecutionState } from '@openbot/domain';
import { PgBoss } from 'pg-boss';
import { callQueries } from '../logs/call-log';
import { engineIn } from '../run/engine-in';
import type { EngineInTransaction } from '../authoring/engine-in-transaction';
import { CheckpointBatcher } from '../logs/checkpoint-batcher';
import { EventWriteBatcher } from '../logs/event-write-batcher';
import { WriterConnection } from '../base/writer-connection';
import { inputHash } from '../authoring/command-key';
import type { EngineContext } from '../run/context';
import { observeEvents, type ExecutionEvent } from '../logs/event-log';
import { initialData, openData, sealData } from '../run/execution-data';
import { systemClock, type Clock } from '../base/clock';
import { FaultPoints } from '../base/fault-points';
import { announceEvents, EVENTS_CHANNEL, NodeListener, Notifier } from '../logs/node-listener';
import { assertAudience, identityOf, openIdentity } from '../run/identity-guard';
import { ADVANCE_QUEUE, BOSS_OWN_BOOKKEEPING_OFF, buildAdvanceJob, enqueueAdvance, type AdvanceJob } from '../base/queue';
import { Runner } from './runner';
import { Schedules } from '../run/schedules';
import { aad, SealedJson } from '../base/sealed-json';
import { newExecutionRow } from '../run/new-execution';
import type { ExecutionRow, NewExecution } from '../base/store';
import { insertExecutionWithJob, selectExecution, selectIdentity } from '../sql/executions';
import { end } from '../run/end';
import { DeadNodeWatch, NodePresence } from './presence';
import { withTransaction, type Transaction } from '../base/tx';
import { RecentResults } from '../base/recent-results';
import { NotAwaitingDecision, type ExecutionView, type OperatorDecision, type SubmitCommand } from '../authoring/engine-api';
import type { EngineOptions } from './engine-options';
import type { Engine } from '../authoring/engine-handle';
import type { Json, Workflow } from '../authoring/workflow';
import * as callSql from '../sql/calls';
import * as commandSql from '../sql/commands';
import * as executionSql from '../sql/executions';

/**
 * The durable execution engine of one node. Features register workflows (EXE-05), submit
 * commands, signal, cancel, decide and observe through the `Engine` they are given; the runner
 * does the rest. Built and started only by the platform's engine wiring (`@openbot/engine/node`).
 */
export class EngineNode implements Engine {
  private readonly workflows = new Map<string, Workflow<Json, Json>>();
  private readonly ctx: EngineContext;
  private readonly runner: Runner;
  private readonly listener: NodeListener;
  /** The event writes' own connection (decision 053). */
  private readonly eventConnection: WriterConnection;
  private readonly presence: NodePresence | null;
  private readonly deadNodeWatch: DeadNodeWatch | null;
  private readonly boss: PgBoss;
  private started = false;
  /** Recurring schedules that submit workflows (docs/decisions/022-schedules-on-croner.md). */
  readonly schedules: Schedules;

  constructor(private readonly options: EngineOptions) {
    // Tags this engine's own event notifications: unique per engine, also when node IDs repeat.
    const origin = randomUUID();
    this.listener = new NodeListener(options.connectionString, origin);
    this.eventConnection = new WriterConnection(options.connectionString, `openbot events ${options.nodeId}`.slice(0, 63));
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      max: 3,
      migrate: false,
      schedule: false,
      ...BOSS_OWN_BOOKKEEPING_OFF,
      application_name: `openbot boss ${options.nodeId}`.slice(0, 63),
    });
    this.boss.on('error', () => undefined);
    this.ctx = {
      pool: options.pool,
      boss: this.boss,
      sealed: new SealedJson(options.sealer),
      failures: options.failures,
      identityCheck: options.identityCheck,
      faults: options.faults ?? new FaultPoints(),
      listener: this.listener,
      notifier: new Notifier(options.pool, origin),
      nodeId: options.nodeId,
      clock: options.clock ?? systemClock,
      leaseSeconds: options.leaseSeconds ?? 15,
      workflows: this.workflows,
      checkpoints: new CheckpointBatcher(options.pool),
      recentResults: new RecentResults(),
      // Event writes have a connection of their own: a first token never waits for a pooled one (decision 053).
      eventWrites: new EventWriteBatcher(this.eventConnection, options.metrics ?? noEngineMetrics, { channel: EVENTS_CHANNEL, origin }),
      eventWindowMs: options.eventWindowMs,
      advanceHere: (id) => void this.runner.advance(id).catch(() => undefined),
      metrics: options.metrics ?? noEngineMetrics,
      tracing: options.tracing ?? noEngineTracing,
    };
    this.runner = new Runner(this.ctx);
    const deadNodes = options.deadNodes ?? {};
    this.presence = deadNodes === false ? null : new NodePresence(options.connectionString, options.nodeId);
    this.deadNodeWatch = deadNodes === false ? null : new DeadNodeWatch(options.pool, options.nodeId, (id, owner) => this.runner.advance(id, false, owner), deadNodes);
    this.schedules = new Schedules(this.ctx, { misfireMs: (options.scheduleMisfireSeconds ?? 60) * 1000 });
  }

  get faults(): FaultPoints {
    return this.ctx.faults;
  }

  get nodeId(): string {
    return this.ctx.nodeId;
  }

  register<S extends Json, I extends Json>(workflow: Workflow<S, I>): void {
    if (this.workflows.has(workflow.name)) throw new Error(`workflow "${workflow.name}" is registered twice`);
    this.workflows.set(workflow.name, workflow);
  }

  async start(): Promise<void> {
    if (this.started) return;
    // Present before owning anything: a peer must never see this node's executions ownerless.
    await this.presence?.start();
    await this.listener.start();
    // Open before the first Turn's first token needs it; should it fail, the first write connects.
    await this.eventConnection.open().catch(() => undefined);
    await this.boss.start();
    this.runner.start();
    await this.boss.work<AdvanceJob>(
      ADVANCE_QUEUE,
      { batchSize: 16, pollingIntervalSeconds: this.options.pollingSeconds ?? 0.5 },
      (jobs) => this.runner.onJobs(jobs),
    );
    this.schedules.start(this.options.schedulePollMs ?? 1_000);
    this.deadNodeWatch?.start();
    this.started = true;
  }

  /** Graceful stop (docs/architecture.md): drain, close gates, hand back leases, then disconnect. */
  async stop(drainMs = 5_000): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.deadNodeWatch?.stop();
    await this.schedules.stop();
    await this.boss.offWork(ADVANCE_QUEUE).catch(() => undefined);
    await this.runner.stop(drainMs);
    await this.ctx.notifier.drain();
    await this.boss.stop({ graceful: false, close: true, timeout: 1_000 }).catch(() => undefined);
    await this.listener.stop();
    await this.eventConnection.close();
    // Last: while leases are handed back this node is still present, so no peer races the handover.
    await this.presence?.stop();
  }

  /**
   * Submits a command (EXE-01, EXE-02): creates the execution (owned by this node, which starts
   * it at once) and its recovery job in one transaction, or answers the execution the same
   * command key already created. A scope the workflow does not admit is Forbidden (IDN-11).
   */
  async submit(command: SubmitCommand): Promise<{ executionId: ExecutionId; created: boolean }> {
    const workflow = this.workflows.get(command.workflow);
    if (!workflow) throw new Error(`no workflow named "${command.workflow}" is registered`);
    assertAudience(workflow, command.scope.kind);
    const id = newId<ExecutionId>();
    const hash = inputHash(command.input);
    const outcome = command.commandKey === undefined
      ? await this.submitPlain(id, command, workflow)
      : await withTransaction(this.ctx.pool, async (tx) => {
      if (command.commandKey !== undefined) {
        const target = command.target ?? command.workflow;
        const inserted = await tx.query({
          ...commandSql.insertCommand,
          values: [command.scope.kind, command.scope.id, target, command.commandKey, hash, id],
        });
        if (inserted.rowCount === 0) {
          const { rows } = await tx.query<{ input_hash: Buffer; execution_id: string }>({
            ...commandSql.selectCommand,
            values: [command.scope.kind, command.scope.id, target, command.commandKey],
          });
          const existing = rows[0]!;
          if (!existing.input_hash.equals(hash)) {
            throw new Conflict('CommandKeyConflict', 'This command key was already used with another input.');
          }
          return { executionId: existing.execution_id as ExecutionId, created: false, row: null };
        }
      }
      const row = this.submittedRow(id, command, workflow);
      // Recovery: if this node dies, the job finds the lease expired and another node takes over.
      await insertExecutionWithJob(tx, row, this.ctx.leaseSeconds, await this.recoveryJob(id));
      return { executionId: id, created: true, row };
    });
    if (outcome.row !== null) {
      // This node owns generation 1 and its lease already: run it now, no queue hop, no re-read.
      this.runner.runOwned(outcome.row);
    }
    return { executionId: outcome.executionId, created: outcome.created };
  }

  /**
   * A submit with no command key and no business rows needs no transaction: one statement writes
   * the execution and its recovery job together (decision 051), so neither exists without the other.
   */
  private async submitPlain(id: ExecutionId, command: SubmitCommand, workflow: Workflow<Json, Json>) {
    const row = this.submittedRow(id, command, workflow);
    await insertExecutionWithJob(this.ctx.pool, row, this.ctx.leaseSeconds, await this.recoveryJob(id));
    return { executionId: id, created: true, row };
  }

  /** The recovery job of a run this node starts: due when its lease would have run out twice. */
  private recoveryJob(id: ExecutionId) {
    return buildAdvanceJob(this.boss, id, this.ctx.leaseSeconds * 2);
  }

  /** A submitted execution: running, owned by this node at generation 1, nothing saved yet. */
  private submittedRow(id: ExecutionId, command: SubmitCommand, workflow: Workflow<Json, Json>): ExecutionRow & NewExecution {
    const sealed = sealData(this.ctx.sealed, id, initialData(workflow.initial(command.input)));
    return newExecutionRow(this.ctx, id, command, true, sealed);
  }

  /**
   * The engine inside the caller's transaction (STC-01): submit, signal, cancel, pause and resume
   * commit with the caller's rows, and the transaction does what follows its COMMIT (see
   * EngineInTransaction). `tx` is `Database.transaction`'s, a call's commit's or `withTransaction`'s.
   */
  in(tx: Transaction): EngineInTransaction {
    return engineIn(this.ctx, (row) => this.runner.runOwned(row), tx);
  }

  /**
   * Stores a signal and wakes its execution (no lost wake-up: a signal saved before the waiter
   * saved its waiting state is found by the waiter's own check under the same row lock). A
   * running phase reads it from its inbox; a paused execution keeps it until resumed.
   */
  async signal(executionId: string, name: string, payload: Json = null): Promise<boolean> {
    return withTransaction(this.ctx.pool, (tx) => this.in(tx).signal(executionId, name, payload));
  }

  /** The time workflows see: features that measure work in their own commands read it here (TASK-03). */
  get clock(): Clock {
    return this.ctx.clock;
  }

  /**
   * A cancel request (EXE-12, EXE-15): enters `cancelling` with a new cancel phase and a stored
   * signal; the owner closes the phase gate, releases resources, cancels attached children and
   * only then ends `cancelled`. On a final execution it changes nothing.
   */
  async cancel(executionId: string): Promise<{ state: ExecutionState } | null> {
    return withTransaction(this.ctx.pool, (tx) => this.in(tx).cancel(executionId));
  }

  /**
   * Pauses an execution (TASK-02): a running phase's gate closes (no new sends), its resources
   * are released and it waits, paused; a waiting one stays waiting and is not run when woken.
   * `paused` is false when there is nothing to pause: it has ended or is being cancelled.
   */
  async pause(executionId: string): Promise<{ state: ExecutionState; paused: boolean } | null> {
    return withTransaction(this.ctx.pool, (tx) => this.in(tx).pause(executionId));
  }

  /** Resumes a paused execution: it continues from its saved state. `resumed` is false when it was not paused. */
  async resume(executionId: string): Promise<{ state: ExecutionState; resumed: boolean } | null> {
    return withTransaction(this.ctx.pool, (tx) => this.in(tx).resume(executionId));
  }

  /** Resolves an execution waiting in outcome_unknown (CALL-03, RES-02). */
  async decide(executionId: string, decision: OperatorDecision): Promise<{ state: ExecutionState } | null> {
    const outcome = await withTransaction(this.ctx.pool, async (tx) => {
      const row = await selectExecution(tx, executionId, true);
      if (!row) return null;
      if (row.state !== 'outcome_unknown') throw new NotAwaitingDecision(row.state);
      const call = await callQueries.latestUnknown(tx, executionId);
      if (decision.decision === 'succeeded') {
        if (call) {
          const sealed = this.ctx.sealed.seal(decision.result ?? null, aad.callResult(call.id));
          await tx.query({
            ...commandSql.decideCall,
            values: [call.id, sealed.keyId, sealed.data],
          });
        }
        await tx.query({ ...executionSql.requeue, values: [executionId] });
        await enqueueAdvance(this.boss, tx, executionId);
        return { state: 'queued' as ExecutionState, run: true };
      }
      if (call) {
        await tx.query({ ...callSql.callStatus, values: [call.id, 'failed'] });
      }
      const outcomeState = decision.decision === 'stop' ? 'cancelled' : 'failed';
      await end(this.ctx, { id: executionId, generation: row.generation }, {
        tx,
        workflow: this.workflows.get(row.workflow),
        data: openData(this.ctx.sealed, row),
        outcome: outcomeState,
        ...(outcomeState === 'failed' ? { failure: { category: 'internal' as const, cause: new Error('an operator decided the unknown outside write failed') } } : {}),
      });
      return { state: outcomeState as ExecutionState, run: false };
    });
    if (outcome === null) return null;
    announceEvents(this.ctx, executionId);
    if (outcome.run) void this.runner.advance(executionId).catch(() => undefined);
    return { state: outcome.state };
  }

  /** The identity an execution was submitted with (opened from its sealed record), or null. */
  async identity(executionId: string): Promise<Json | null> {
    const row = await selectIdentity(this.ctx.pool, executionId);
    const sealed = row ? identityOf(row) : null;
    return sealed === null ? null : openIdentity(this.ctx.sealed, executionId, sealed);
  }

  async get(executionId: string): Promise<ExecutionView | null> {
    const row = await selectExecution(this.ctx.pool, executionId);
    return row ? toView(row) : null;
  }

  /** The end result of a completed execution (from its sealed data). */
  async result(executionId: string): Promise<Json | undefined> {
    // Completed here lately: the result is at hand, and a completed result never changes (decision 060).
    const recent = this.ctx.recentResults.get(executionId);
    if (recent !== undefined) return recent;
    const row = await selectExecution(this.ctx.pool, executionId);
    if (!row || row.state !== 'completed') return undefined;
    return openData(this.ctx.sealed, row).result ?? null;
  }

  /** `observe(executionId, afterSequence)` (EVT-01): follows the log until the final event, or until caught up. */
  observe(executionId: string, after = 0, signal?: AbortSignal, follow = true): AsyncGenerator<ExecutionEvent, void, undefined> {
    return observeEvents({ db: this.ctx.pool, sealed: this.ctx.sealed, listener: this.listener }, executionId, after, signal, follow);
  }

  /** Resolves with the final state (reads the event log until `execution.ended`). */
  async waitForEnd(executionId: string, signal?: AbortSignal): Promise<ExecutionState> {
    for await (const event of this.observe(executionId, 0, signal)) {
      if (event.type === 'execution.ended') return event.state as ExecutionState;
    }
    const row = await selectExecution(this.ctx.pool, executionId);
    return row?.state ?? 'interrupted';
  }
}

/** An execution as the API shows it. */
function toView(row: ExecutionRow): ExecutionView {
  return {
    id: row.id as ExecutionId,
    workflow: row.workflow,
    state: row.state,
    generation: row.generation,
    step: row.step,
    organizationId: row.organization_id,
    scope: { kind: row.scope_kind, id: row.scope_id },
    resource: row.resource_type !== null && row.resource_id !== null ? { type: row.resource_type, id: row.resource_id } : null,
    parentId: row.parent_id,
    paused: row.paused,
    errorId: row.error_id,
    category: row.category,
  };
}
