import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { deltasPrunedAt, Engine, type Clock, type ExecutionEvent } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { assertExecutionVisible } from '../execution-access';

/** The shortest time after its end that retention keeps an execution's deltas (1 day, the least setting). */
const MIN_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The events of an execution after a cursor, as an async iterable the SSE and long-poll routes
 * consume (EVT-03). Closing it stops reading; it never cancels the execution (RES-03).
 */
export class ObserveExecution extends Query<AsyncIterable<ExecutionEvent>> {
  constructor(
    readonly caller: MemberCaller,
    readonly executionId: string,
    readonly after: number,
    readonly signal: AbortSignal,
    /** false: end once caught up instead of waiting for more. */
    readonly follow = true,
  ) {
    super();
  }
}

@QueryHandler(ObserveExecution)
export class ObserveExecutionHandler implements IQueryHandler<ObserveExecution> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, executionId, after, signal, follow }: ObserveExecution): Promise<AsyncIterable<ExecutionEvent>> {
    await assertExecutionVisible(this.db, caller, executionId);
    return markPruned(this.db, this.engine.clock, executionId, this.engine.observe(executionId, after, signal, follow));
  }
}

/**
 * The final event of an execution whose `text.delta` events retention removed carries
 * `pruned: { types: ['text.delta'], at }` (docs/decisions/041-retention.md): a reader replaying
 * it learns why there are gaps in the sequence and no deltas. Read once, at the final event, and
 * only for an execution that ended at least a day ago on the engine's clock (the shortest
 * retention: nothing younger is ever pruned, so a live reader's end costs no read); every other
 * event passes through as the same object (readers share its encoded frame).
 */
function markPruned(db: Database, clock: Clock, executionId: string, events: AsyncIterable<ExecutionEvent>): AsyncIterable<ExecutionEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<ExecutionEvent> {
      const inner = events[Symbol.asyncIterator]();
      // A plain callback, not an async one: every other event passes through without a promise of its own.
      const marked = (step: IteratorResult<ExecutionEvent>): IteratorResult<ExecutionEvent> | Promise<IteratorResult<ExecutionEvent>> => {
        if (step.done === true || step.value.type !== 'execution.ended') return step;
        if (clock.now() - Date.parse(step.value.at) < MIN_RETENTION_MS) return step;
        return deltasPrunedAt(db, executionId).then((at) =>
          at === null ? step : { done: false, value: { ...step.value, pruned: { types: ['text.delta'], at: at.toISOString() } } },
        );
      };
      return {
        next: () => inner.next().then(marked),
        return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
      };
    },
  };
}
