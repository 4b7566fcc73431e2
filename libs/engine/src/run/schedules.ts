import { InvalidInput, newId, type ErrorId, type ExecutionId } from '@openbot/domain';
import type { EngineContext } from './context';
import { assertAudience } from './identity-guard';
import { insertQueued } from './new-execution';
import type { Queryable } from '../base/ports';
import { dueFires, nextFireAfter, parseCron, type MissedRuns } from '../base/schedule-times';
import { aad } from '../base/sealed-json';
import { isConnectionFailure } from '../base/storage-retry';
import { withTransaction } from '../base/tx';
import type { NewExecutionCommand } from '../authoring/engine-api';
import * as scheduleSql from '../sql/schedules';

import type { ScheduleSpec, ScheduleView } from '../authoring/schedule-spec';

export type { MissedRuns } from '../base/schedule-times';
export type { ScheduleSpec, ScheduleView };
interface ScheduleRow {
  id: string;
  name: string;
  cron: string;
  time_zone: string;
  workflow: string;
  organization_id: string | null;
  scope_kind: 'member' | 'service';
  scope_id: string;
  resource_type: string | null;
  resource_id: string | null;
  key_id: string;
  input: Buffer;
  identity_key_id: string | null;
  identity: Buffer | null;
  missed: MissedRuns['policy'];
  catch_up_seconds: number | null;
  next_fire_at: Date | null;
}

/**
 * Recurring schedules on the engine (docs/decisions/022-schedules-on-croner.md). croner computes
 * fire times; our own rows make them durable: each fire writes a (schedule, fire time) row in the
 * transaction that submits its execution (STC-01), so a fire time runs at most once across nodes
 * and restarts. Every node ticks; a row lock (SKIP LOCKED) lets one node handle a schedule at a time.
 */
export class Schedules {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<number> | null = null;
  /** The run after the one in flight, for callers that asked while it ran. */
  private nextTick: Promise<number> | null = null;

  constructor(
    private readonly ctx: EngineContext,
    private readonly options: { readonly misfireMs: number },
  ) {}

  /** Creates or updates the schedule of this name; a changed expression or time zone recomputes its next fire time. */
  async upsert(spec: ScheduleSpec): Promise<ScheduleView> {
    const timeZone = spec.timeZone ?? 'UTC';
    const cron = parseCron(spec.cron, timeZone);
    const missed = spec.missed ?? { policy: 'skip' };
    if (missed.policy === 'catch-up' && !(Number.isInteger(missed.windowSeconds) && missed.windowSeconds > 0)) {
      throw new InvalidInput([{ path: 'missed.windowSeconds', message: 'A catch-up window is a whole number of seconds above 0.' }]);
    }
    const workflow = this.ctx.workflows.get(spec.workflow);
    if (!workflow) throw new Error(`no workflow named "${spec.workflow}" is registered`);
    // Refused now, not at every fire: a scope the workflow does not admit (IDN-11).
    assertAudience(workflow, spec.scope.kind);
    const id = newId();
    const next = nextFireAfter(cron, this.ctx.clock.now());
    const outcome = await withTransaction(this.ctx.pool, async (tx) => {
      // The ID is known only after the conflict check: seal for the row that will hold the input.
      const { rows: existing } = await tx.query<{ id: string }>({
        ...scheduleSql.scheduleLock,
        values: [spec.name],
      });
      const rowId = existing[0]?.id ?? id;
      const input = this.ctx.sealed.seal(spec.input, aad.scheduleInput(rowId));
      const identity = spec.identity === undefined || spec.identity === null ? null : this.ctx.sealed.seal(spec.identity, aad.scheduleIdentity(rowId));
      const { rows } = await tx.query<ScheduleRow>({
        ...scheduleSql.scheduleUpsert,
        values: [
          rowId,
          spec.name,
          spec.cron,
          timeZone,
          spec.workflow,
          spec.scope.organizationId,
          spec.scope.kind,
          spec.scope.id,
          spec.resource?.type ?? null,
          spec.resource?.id ?? null,
          input.keyId,
          input.data,
          identity?.keyId ?? null,
          identity?.data ?? null,
          missed.policy,
          missed.policy === 'catch-up' ? missed.windowSeconds : null,
          next,
        ],
      });
      // A concurrent first upsert of the same name won: the input was sealed for another row ID.
      if (rows[0]!.id !== rowId) throw new UpsertRace();
      return rows[0]!;
    }).catch((error: unknown) => {
      if (error instanceof UpsertRace) return null;
      throw error;
    });
    return outcome === null ? this.upsert(spec) : toView(outcome);
  }

  /** Removes the schedule; fires already made stay (their executions run on). */
  async remove(name: string): Promise<boolean> {
    const { rowCount } = await this.ctx.pool.query({ ...scheduleSql.scheduleRemove, values: [name] });
    return rowCount === 1;
  }

  async get(name: string): Promise<ScheduleView | null> {
    const { rows } = await this.ctx.pool.query<ScheduleRow>({ ...scheduleSql.scheduleGet, values: [name] });
    return rows[0] ? toView(rows[0]) : null;
  }

  /** The fires of a schedule, oldest first: each fire time and the execution it submitted. */
  async fires(name: string): Promise<Array<{ fireAt: Date; executionId: ExecutionId }>> {
    const { rows } = await this.ctx.pool.query<{ fire_at: Date; execution_id: ExecutionId }>({
      ...scheduleSql.scheduleFires,
      values: [name],
    });
    return rows.map((r) => ({ fireAt: r.fire_at, executionId: r.execution_id }));
  }

  /**
   * Handles every schedule due by the engine's clock: submits its fire times (by its missed-run
   * policy) and moves its next fire time on. Answers the number of executions submitted.
   * A tick reads the clock when it starts, so one asked for while another runs (which may have
   * read the clock before the caller moved it) runs after it; every caller meanwhile shares that
   * next run. Answers the count of the run it waited for.
   */
  tick(): Promise<number> {
    if (this.ticking === null) {
      this.ticking = this.tickOnce().finally(() => (this.ticking = null));
      return this.ticking;
    }
    this.nextTick ??= this.ticking.then(
      () => this.afterTick(),
      () => this.afterTick(),
    );
    return this.nextTick;
  }

  private afterTick(): Promise<number> {
    this.nextTick = null;
    return this.tick();
  }

  /** Ticks every `pollMs` until stopped (0: never; tests then call `tick()`). */
  start(pollMs: number): void {
    if (pollMs <= 0 || this.timer !== null) return;
    const loop = (): void => {
      this.timer = setTimeout(() => {
        void this.tick()
          .catch(() => undefined)
          .finally(() => {
            if (this.timer !== null) loop();
          });
      }, pollMs);
      this.timer.unref();
    };
    loop();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking?.catch(() => undefined);
    await this.nextTick?.catch(() => undefined);
  }

  private async tickOnce(): Promise<number> {
    const now = this.ctx.clock.now();
    const workflows = [...this.ctx.workflows.keys()];
    const submitted: string[] = [];
    // One plain query when nothing is due (the usual tick): no transaction, no lock.
    const { rowCount } = await this.ctx.pool.query({
      ...scheduleSql.schedulesAnyDue,
      values: [new Date(now), workflows],
    });
    if (rowCount === 0) return 0;
    // Not retried here: during an outage the next tick is the retry (and stop() need not wait it out).
    await withTransaction(this.ctx.pool, async (tx) => {
      submitted.length = 0;
      // Only schedules of workflows this node has (a rolling deploy): another node handles the rest.
      const { rows } = await tx.query<ScheduleRow>({
        ...scheduleSql.schedulesDue,
        values: [new Date(now), workflows],
      });
      for (const row of rows) {
        // One schedule that cannot fire (its sealed input unreadable, say) must not hold up the others.
        await tx.query('SAVEPOINT schedule_fire');
        try {
          submitted.push(...(await this.fire(tx, row, now)));
          await tx.query('RELEASE SAVEPOINT schedule_fire');
        } catch (error) {
          if (isConnectionFailure(error)) throw error;
          await tx.query('ROLLBACK TO SAVEPOINT schedule_fire');
          await this.skipBroken(tx, row, now, error);
        }
      }
    });
    // A node that dies here leaves queued executions with their jobs: another node runs them.
    if (submitted.length > 0) await this.ctx.faults.hit('schedule.fired.committed', { executionId: submitted[0]! });
    for (const id of submitted) this.ctx.advanceHere(id);
    return submitted.length;
  }

  /** A schedule that failed to fire: its due times are dropped, the cause kept in an error record (ERR-01). */
  private async skipBroken(tx: Queryable, row: ScheduleRow, now: number, cause: unknown): Promise<void> {
    let next: Date | null;
    try {
      next = nextFireAfter(parseCron(row.cron, row.time_zone), now);
    } catch {
      next = null;
    }
    await this.ctx.failures.record(tx, { errorId: newId<ErrorId>(), category: 'internal', origin: `schedule:${row.name}`, cause });
    await tx.query({ ...scheduleSql.scheduleNext, values: [row.id, next] });
  }

  /** One due schedule, under its row lock: its fire rows and executions commit together (STC-01). */
  private async fire(tx: Queryable, row: ScheduleRow, now: number): Promise<string[]> {
    const cron = parseCron(row.cron, row.time_zone);
    const { fire, next } = dueFires(cron, row.next_fire_at!, now, missedOf(row), this.options.misfireMs);
    const submitted: string[] = [];
    if (fire.length > 0) {
      const input = this.ctx.sealed.open(row.key_id, row.input, aad.scheduleInput(row.id));
      const identity = row.identity_key_id !== null && row.identity !== null ? this.ctx.sealed.open(row.identity_key_id, row.identity, aad.scheduleIdentity(row.id)) : null;
      const command: NewExecutionCommand = {
        workflow: row.workflow,
        input,
        scope: { kind: row.scope_kind, id: row.scope_id, organizationId: row.organization_id },
        ...(row.resource_type !== null && row.resource_id !== null ? { resource: { type: row.resource_type, id: row.resource_id } } : {}),
        identity,
      };
      for (const at of fire) {
        const executionId = newId<ExecutionId>();
        // The unique (schedule, fire time) row: a fire time another node or an earlier run already made is not made again.
        const { rowCount } = await tx.query({
          ...scheduleSql.scheduleFire,
          values: [row.id, at, executionId],
        });
        if (rowCount !== 1) continue;
        await insertQueued(this.ctx, tx, executionId, command, true);
        submitted.push(executionId);
      }
    }
    await tx.query({
      ...scheduleSql.scheduleNext,
      values: [row.id, next],
    });
    return submitted;
  }
}

class UpsertRace extends Error {}

function missedOf(row: Pick<ScheduleRow, 'missed' | 'catch_up_seconds'>): MissedRuns {
  if (row.missed === 'catch-up') return { policy: 'catch-up', windowSeconds: row.catch_up_seconds ?? 0 };
  return { policy: row.missed };
}

function toView(row: ScheduleRow): ScheduleView {
  return { id: row.id, name: row.name, cron: row.cron, timeZone: row.time_zone, workflow: row.workflow, missed: missedOf(row), nextFireAt: row.next_fire_at };
}
