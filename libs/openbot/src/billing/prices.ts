import type { Queryable } from '@openbot/engine';

/** A price version in micros per million tokens (PLAT-08). */
export interface Price {
  readonly id: string;
  readonly inputPerMillionMicros: bigint;
  readonly outputPerMillionMicros: bigint;
  readonly cachedInputPerMillionMicros: bigint;
}

const MILLION = 1_000_000n;

/** ceil(n / 1,000,000) for n ≥ 0, in integers: no floats anywhere. */
function perMillion(n: bigint): bigint {
  return (n + MILLION - 1n) / MILLION;
}

/**
 * The cost of a call: ceil((uncached input × input price + cached input × cached price + output ×
 * output price) / 1,000,000). Without a price it costs 0. The same formula prices a
 * reservation (the input estimate and `max_tokens`), so a confirmed cost never exceeds what
 * was reserved for the same counts.
 */
export function costOf(price: Price | null, tokens: { readonly inputTokens: number; readonly cachedInputTokens?: number | null; readonly outputTokens: number }): bigint {
  if (price === null) return 0n;
  const cached = BigInt(Math.min(tokens.cachedInputTokens ?? 0, tokens.inputTokens));
  const uncached = BigInt(tokens.inputTokens) - cached;
  return perMillion(uncached * price.inputPerMillionMicros + cached * price.cachedInputPerMillionMicros + BigInt(tokens.outputTokens) * price.outputPerMillionMicros);
}

/** The same cost in SQL (numeric, exact) over a usage row `r` and a price row `p`. */
export const COST_SQL = (input: string, cached: string, output: string) =>
  `ceil(((${input} - coalesce(${cached}, 0))::numeric * p.input_per_million_micros
         + coalesce(${cached}, 0)::numeric * p.cached_input_per_million_micros
         + ${output}::numeric * p.output_per_million_micros) / 1000000)::bigint`;

export const prices = {
  /**
   * The version in force now for one model of an organization: the latest `effective_from` not
   * after now (ties: the newer row). Read once when a call starts; the call keeps its ID, so a
   * later change never reprices it.
   */
  async inForce(db: Queryable, organizationId: string, model: string): Promise<Price | null> {
    const { rows } = await db.query<{ id: string; input: string; output: string; cached: string }>({
      name: 'billing.price_in_force',
      text: `SELECT id, input_per_million_micros::text AS input, output_per_million_micros::text AS output,
                    cached_input_per_million_micros::text AS cached
               FROM prices WHERE organization_id = $1 AND model = $2 AND effective_from <= now()
              ORDER BY effective_from DESC, created_at DESC, id DESC LIMIT 1`,
      values: [organizationId, model],
    });
    const row = rows[0];
    if (row === undefined) return null;
    return { id: row.id, inputPerMillionMicros: BigInt(row.input), outputPerMillionMicros: BigInt(row.output), cachedInputPerMillionMicros: BigInt(row.cached) };
  },
};
