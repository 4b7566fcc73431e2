import { newId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { DefaultPrice } from '../config/config';

/** A price version in micros per million tokens (PLAT-08). */
export interface Price {
  readonly id: string;
  readonly inputPerMillionMicros: bigint;
  readonly outputPerMillionMicros: bigint;
  readonly cachedInputPerMillionMicros: bigint;
}

const MILLION = 1_000_000n;

interface PriceRow {
  id: string;
  input: string;
  output: string;
  cached: string;
}

const PRICE_ROW_COLUMNS = `id, input_per_million_micros::text AS input, output_per_million_micros::text AS output, cached_input_per_million_micros::text AS cached`;

function toPrice(row: PriceRow | undefined): Price | null {
  if (row === undefined) return null;
  return { id: row.id, inputPerMillionMicros: BigInt(row.input), outputPerMillionMicros: BigInt(row.output), cachedInputPerMillionMicros: BigInt(row.cached) };
}

/** ceil(n / 1,000,000) for n ≥ 0, in integers: no floats anywhere. */
function perMillion(n: bigint): bigint {
  return (n + MILLION - 1n) / MILLION;
}

/**
 * The cost of a call: ceil((uncached input × input price + cached input × cached price + output ×
 * output price) / 1,000,000). Without a price it costs 0 (only without credits: decision 072). The same formula prices a
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
   * The version in force now for one model of an organization without credits: the latest
   * `effective_from` not after now (ties: the newer row), whoever set it. Read once when a call
   * starts; the call keeps its ID, so a later change never reprices it.
   */
  async inForce(db: Queryable, organizationId: string, model: string): Promise<Price | null> {
    const { rows } = await db.query<PriceRow>({
      name: 'billing.price_in_force',
      text: `SELECT ${PRICE_ROW_COLUMNS}
               FROM prices WHERE organization_id = $1 AND model = $2 AND effective_from <= now()
              ORDER BY effective_from DESC, created_at DESC, id DESC LIMIT 1`,
      values: [organizationId, model],
    });
    return toPrice(rows[0]);
  },

  /**
   * The price of a call of an organization with credits (decision 072): the platform's version in
   * force now; without one, the operator's default price, as a version of its own (`default`: the
   * latest with the same amounts, or a new one from now on), so the usage record names what it
   * was charged at. Never a version the organization set: it could have priced a model at 0
   * before its first grant. Null: the model has no price the platform stands behind, and the
   * call must not send. The caller holds the credit account's lock, so two calls write one version.
   */
  async forCredits(db: Queryable, organizationId: string, model: string, fallback: DefaultPrice | null): Promise<Price | null> {
    const { rows } = await db.query<PriceRow>({
      name: 'billing.price_for_credits',
      text: `WITH platform AS (
               SELECT ${PRICE_ROW_COLUMNS} FROM prices
                WHERE organization_id = $1 AND model = $2 AND set_by = 'platform' AND effective_from <= now()
                ORDER BY effective_from DESC, created_at DESC, id DESC LIMIT 1
             ), fallback AS (
               SELECT ${PRICE_ROW_COLUMNS} FROM prices
                WHERE organization_id = $1 AND model = $2 AND set_by = 'default' AND effective_from <= now()
                  AND input_per_million_micros = $4::bigint AND output_per_million_micros = $5::bigint AND cached_input_per_million_micros = $6::bigint
                  AND NOT EXISTS (SELECT 1 FROM platform)
                ORDER BY effective_from DESC, created_at DESC, id DESC LIMIT 1
             ), added AS (
               INSERT INTO prices (id, organization_id, model, input_per_million_micros, output_per_million_micros, cached_input_per_million_micros, effective_from, set_by)
               SELECT $3, $1, $2, $4::bigint, $5::bigint, $6::bigint, now(), 'default'
                WHERE $4::bigint IS NOT NULL AND NOT EXISTS (SELECT 1 FROM platform) AND NOT EXISTS (SELECT 1 FROM fallback)
               RETURNING ${PRICE_ROW_COLUMNS}
             )
             SELECT * FROM platform UNION ALL SELECT * FROM fallback UNION ALL SELECT * FROM added`,
      values: [
        organizationId,
        model,
        newId(),
        fallback?.inputPerMillionMicros ?? null,
        fallback?.outputPerMillionMicros ?? null,
        fallback?.cachedInputPerMillionMicros ?? null,
      ],
    });
    return toPrice(rows[0]);
  },
};
