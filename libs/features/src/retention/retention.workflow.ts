import { codec, defineWorkflow } from '@openbot/engine';
import type { Sql } from '../../../platform/src/database/sql';
import type { RetentionDefaults } from '../../../platform/src/config/config';
import { pruneBatch } from './prune-batches';

export const RETENTION_WORKFLOW = 'platform.retention';
/** The schedule that submits it (one per platform, upserted at boot). */
export const RETENTION_SCHEDULE = 'platform.retention';
/** Executions per batch: one short statement each. */
export const RETENTION_BATCH = 200;
/** Batches of each kind one run does at most; the next run goes on where this one stopped. */
export const RETENTION_MAX_BATCHES = 50;

type Stage = 'pending' | 'done';

const RETENTION = defineWorkflow({
  name: RETENTION_WORKFLOW,
  // Platform maintenance: only a service scope submits it (IDN-11).
  audience: 'service',
  input: codec.json,
  state: codec.object({
    deltas: codec.oneOf(['pending', 'done'] as const),
    payloads: codec.oneOf(['pending', 'done'] as const),
    batches: codec.number,
    deltasPruned: codec.number,
    payloadsCleared: codec.number,
  }),
  result: codec.object({ batches: codec.number, deltasPruned: codec.number, payloadsCleared: codec.number }),
});

/**
 * The retention run (docs/decisions/041-retention.md), submitted by a durable schedule: each phase
 * prunes one batch of each kind still pending (`text.delta` events, then call results, of ended
 * executions past their organization's retention) and checkpoints, so a takeover goes on from
 * the last batch and no transaction holds more than one batch. It ends when a batch comes back
 * short for both kinds, or after `RETENTION_MAX_BATCHES`. Time is the engine's clock.
 */
export function retentionWorkflow(deps: { readonly db: Sql; readonly defaults: RetentionDefaults; readonly batchSize?: number }) {
  const size = deps.batchSize ?? RETENTION_BATCH;
  return RETENTION.implement({
    initial: () => ({ deltas: 'pending' as Stage, payloads: 'pending' as Stage, batches: 0, deltasPruned: 0, payloadsCleared: 0 }),
    next: (state) =>
      (state.deltas === 'done' && state.payloads === 'done') || state.batches >= RETENTION_MAX_BATCHES
        ? { end: 'completed', result: { batches: state.batches, deltasPruned: state.deltasPruned, payloadsCleared: state.payloadsCleared } }
        : { phase: 'prune' },
    phases: {
      prune: {
        retries: 3,
        async run(context) {
          const state = context.state;
          const now = new Date(context.clock.now());
          let { deltas, payloads, deltasPruned, payloadsCleared } = state;
          if (deltas === 'pending') {
            const batch = await pruneBatch(deps.db, 'deltas', now, deps.defaults, size);
            deltasPruned += batch.rows;
            if (batch.executions < size) deltas = 'done';
          }
          if (payloads === 'pending') {
            const batch = await pruneBatch(deps.db, 'payloads', now, deps.defaults, size);
            payloadsCleared += batch.rows;
            if (batch.executions < size) payloads = 'done';
          }
          return { state: { deltas, payloads, batches: state.batches + 1, deltasPruned, payloadsCleared } };
        },
      },
    },
  });
}
