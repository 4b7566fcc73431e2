import { isFinal, type ExecutionState } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { subtreeSpent } from '../../../platform/src/billing/tree-cost';

/** `limits` of an execution view: null for work without limits (contract of issue 15). */
export interface ExecutionLimitsView {
  readonly maxSteps: number;
  readonly maxSeconds: number;
  readonly maxOutputTokens: number;
  /** The Bot's cost limit (billing's); null: none. */
  readonly maxCostMicros: number | null;
}

export interface ExecutionSpentView {
  readonly steps: number;
  /** Counted only while the work could run: not while paused or waiting for an approval (TASK-03). */
  readonly seconds: number;
  readonly outputTokens: number;
  /** The known cost of its model calls and of every task under it, each call counted once. */
  readonly costMicros: number | null;
  /** Calls of it and its tasks whose cost is not known yet (unknown usage). */
  readonly unknownCostCalls: number | null;
}

export type ExecutionStop = 'max-steps' | 'max-seconds' | 'max-output-tokens' | 'max-cost' | 'budget';

export interface ExecutionSpend {
  readonly limits: ExecutionLimitsView | null;
  readonly spent: ExecutionSpentView | null;
  readonly stop: ExecutionStop | null;
}

interface Row {
  max_steps: number;
  max_seconds: number;
  max_output_tokens: number;
  max_cost_micros: string | null;
  steps: number;
  output_tokens: string;
  active_ms: string;
  counting_since: Date | null;
  paused_ms_seen: string;
  final_stop: string | null;
  paused_ms: string | null;
  paused_at: Date | null;
}

/**
 * The limits and spending a Turn saved with its last checkpoint, its time brought up to `now`
 * (engine clock) minus the pauses since: what `GET /v1/executions/{id}` shows. `stop` names the
 * limit that ended it, read from the saved counts (a final answer or a length cut-off is null).
 */
export async function executionSpend(
  db: Queryable,
  execution: { readonly id: string; readonly state: ExecutionState; readonly category: string | null },
  now: number,
): Promise<ExecutionSpend> {
  const { rows } = await db.query<Row>({
    name: 'executions.spend',
    text: `SELECT l.*, p.paused_ms::text AS paused_ms, p.paused_at FROM execution_limits l
             LEFT JOIN execution_pauses p ON p.execution_id = l.execution_id WHERE l.execution_id = $1`,
    values: [execution.id],
  });
  const row = rows[0];
  if (row === undefined) return { limits: null, spent: null, stop: null };
  const final = isFinal(execution.state);
  let ms = Number(row.active_ms);
  if (row.counting_since !== null && !final) {
    const pausedSince = Number(row.paused_ms ?? 0) - Number(row.paused_ms_seen) + (row.paused_at === null ? 0 : Math.max(0, now - row.paused_at.getTime()));
    ms += Math.max(0, now - row.counting_since.getTime() - pausedSince);
  }
  const outputTokens = Number(row.output_tokens);
  let stop: ExecutionStop | null = null;
  // Its own time limit ends a Turn `failed`/`timeout` with the counted time saved at or past it; a model
  // provider's timeout has the same category (decision 082) but is sent only before the limit is reached.
  if (execution.state === 'failed' && execution.category === 'timeout' && Number(row.active_ms) >= row.max_seconds * 1000) stop = 'max-seconds';
  else if (execution.state === 'completed') {
    if (row.final_stop === 'max-cost' || row.final_stop === 'budget') stop = row.final_stop;
    else if (row.final_stop === null) stop = row.steps >= row.max_steps ? 'max-steps' : outputTokens >= row.max_output_tokens ? 'max-output-tokens' : null;
  }
  return {
    limits: { maxSteps: row.max_steps, maxSeconds: row.max_seconds, maxOutputTokens: row.max_output_tokens, maxCostMicros: row.max_cost_micros === null ? null : Number(row.max_cost_micros) },
    spent: { steps: row.steps, seconds: Math.floor(ms / 1000), outputTokens, ...(await subtreeSpent(db, execution.id)) },
    stop,
  };
}
