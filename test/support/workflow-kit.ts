import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ManualClock, type Clock } from '@openbot/engine';
import { type EngineOptions } from '@openbot/engine/node';
import { ENGINE_CLOCK } from '@openbot/platform';
import { Database } from '../../libs/platform/src/database/sql';
import { startTestEngine, type TestEngine } from './test-engine';

/**
 * The workflow test kit (docs/design STYLE 15, Temporal's time-skipping test environment): what a
 * workflow spec needs, in one call, in place of the setup each spec wrote for itself. A fresh
 * migrated database on the embedded PostgreSQL, an Engine on it (this node's runner, recovery and
 * queue), the `Database` a feature's workflow is built with (the same pool), and the engine's
 * injectable clock, which only the test moves: a spec crosses an hour of waits and limits with
 * `kit.clock.advance(3_600_000)` instead of waiting it. Every extra node (`kit.node`) is another
 * node like the first: the same clock and engine options, unless the test hands it others.
 */
export interface WorkflowKit extends TestEngine {
  /** The feature's way to the database: `rows`/`one`/`count`, and `transaction` for writes. */
  readonly db: Database;
  /** The engine's clock (what `context.clock` and `next` read): it moves only when the test moves it. */
  readonly clock: ManualClock;
}

export interface WorkflowKitOptions extends Partial<EngineOptions> {
  /** Where the clock starts (default: the real now, then frozen). */
  readonly startAt?: number | Date;
}

/** Starts the kit; `close()` stops every node and drops the database. Register workflows, then `kit.engine.start()`. */
export async function startWorkflowKit(options: WorkflowKitOptions = {}): Promise<WorkflowKit> {
  const { startAt, ...engineOptions } = options;
  const clock = new ManualClock(startAt);
  const t = await startTestEngine({ clock, ...engineOptions });
  return {
    ...t,
    db: new Database(t.pool),
    clock,
    node: (nodeId, extra = {}) => t.node(nodeId, { clock, ...engineOptions, ...extra }),
  };
}

/**
 * The same clock for a whole app (test/support/test-app.ts `clock`): the engine module takes its
 * clock from ENGINE_CLOCK, so the app's workflows (Turns, approvals, retention, schedules) read it.
 */
export function engineClockModule(clock: Clock): DynamicModule {
  @Global()
  @Module({})
  class EngineClockModule {}
  return { module: EngineClockModule, providers: [{ provide: ENGINE_CLOCK, useValue: clock }], exports: [ENGINE_CLOCK] };
}
