import type { Queryable } from '@openbot/engine';

/**
 * What budgets and credits have spent and hold (PLAT-08, USE-02..04), derived from usage records
 * and holds, never stored. A budget counts, in its UTC period, the known cost (or the confirmed
 * tokens) of its scope's usage records; reserved is what open holds reserve plus what unknown,
 * unreleased records keep reserved (a provider that reports no usage cannot make a budget
 * meaningless); a released unknown record counts its reservation as spent (its cost, decision 072).
 * The credits' balance is the ledger's sum.
 */

export interface BudgetStanding {
  readonly id: string;
  readonly limitMicros: bigint | null;
  readonly limitTokens: bigint | null;
  readonly spentMicros: bigint;
  readonly spentTokens: bigint;
  readonly reservedMicros: bigint;
  readonly reservedTokens: bigint;
}

export interface CreditStanding {
  readonly balanceMicros: bigint;
  readonly reservedMicros: bigint;
}

/** What a usage record or hold `x` is billed to matches budget `b`'s scope. */
const MATCHES = (x: string) =>
  `(b.scope_kind = 'organization' OR (b.scope_kind = 'bot' AND ${x}.bot_id = b.scope_id)
     OR (b.scope_kind = 'member' AND ${x}.scope_kind = 'member' AND ${x}.scope_id = b.scope_id))`;

/** A budget's period start: UTC calendar day or month, or ever. */
export const PERIOD_START = `CASE b.period WHEN 'day' THEN date_trunc('day', now(), 'UTC') WHEN 'month' THEN date_trunc('month', now(), 'UTC')
                             ELSE '-infinity'::timestamptz END`;

/** A budget's standing as `BudgetStanding` reads it (`StandingRow`), over a budgets row `b` joined with `STANDING_JOINS`. */
export const STANDING_COLUMNS = `b.id, b.limit_micros::text AS limit_micros, b.limit_tokens::text AS limit_tokens,
       s.spent_micros::text AS spent_micros, s.spent_tokens::text AS spent_tokens,
       (s.unknown_micros + hh.micros)::text AS reserved_micros, (s.unknown_tokens + hh.tokens)::text AS reserved_tokens`;

export const STANDING_JOINS = `
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(r.cost_micros), 0) AS spent_micros,
           -- A released unknown record was charged its reservation: its reserved tokens are spent (decision 072).
           coalesce(sum(CASE WHEN r.status = 'unknown' AND r.released_at IS NOT NULL THEN coalesce(r.reserved_tokens, 0)
                             ELSE coalesce(r.input_tokens, 0) + coalesce(r.output_tokens, 0) END), 0) AS spent_tokens,
           coalesce(sum(r.reserved_micros) FILTER (WHERE r.status = 'unknown' AND r.released_at IS NULL), 0) AS unknown_micros,
           coalesce(sum(r.reserved_tokens) FILTER (WHERE r.status = 'unknown' AND r.released_at IS NULL), 0) AS unknown_tokens
      FROM usage_records r
     WHERE r.organization_id = b.organization_id AND r.created_at >= ${PERIOD_START} AND ${MATCHES('r')}
  ) s
  CROSS JOIN LATERAL (
    SELECT coalesce(sum(h.reserved_micros), 0) AS micros, coalesce(sum(h.reserved_tokens), 0) AS tokens
      FROM usage_holds h
     WHERE h.organization_id = b.organization_id AND h.released_at IS NULL AND ${MATCHES('h')}
  ) hh`;

export interface StandingRow {
  id: string;
  limit_micros: string | null;
  limit_tokens: string | null;
  spent_micros: string;
  spent_tokens: string;
  reserved_micros: string;
  reserved_tokens: string;
}

export function toStanding(row: StandingRow): BudgetStanding {
  return {
    id: row.id,
    limitMicros: row.limit_micros === null ? null : BigInt(row.limit_micros),
    limitTokens: row.limit_tokens === null ? null : BigInt(row.limit_tokens),
    spentMicros: BigInt(row.spent_micros),
    spentTokens: BigInt(row.spent_tokens),
    reservedMicros: BigInt(row.reserved_micros),
    reservedTokens: BigInt(row.reserved_tokens),
  };
}

/** The SQL expressions a limit probe reads its scope from: parameters, or columns of the caller's own read. */
export interface LimitScopeSql {
  readonly organizationId: string;
  readonly scopeKind: string;
  readonly scopeId: string;
  readonly botId: string;
}

const applicableIn = (table: string, s: LimitScopeSql) => `EXISTS (SELECT 1 FROM ${table} WHERE organization_id = ${s.organizationId}
  AND (scope_kind = 'organization' OR (scope_kind = 'bot' AND scope_id = ${s.botId}) OR (scope_kind = 'member' AND ${s.scopeKind} = 'member' AND scope_id = ${s.scopeId})))`;

/**
 * True when a budget or a rate limit applies to the scope or the organization has credits:
 * otherwise nothing limits it. `anyLimitSql` reads the scope from the given expressions (the
 * chat lock passes its Bot column); `ANY_LIMIT_SQL` from $1 organization, $2 scope kind, $3 scope
 * ID and $4 Bot.
 */
export function anyLimitSql(s: LimitScopeSql): string {
  return `(${applicableIn('budgets', s)} OR ${applicableIn('rate_limits', s)} OR EXISTS (SELECT 1 FROM credit_accounts WHERE organization_id = ${s.organizationId}))`;
}

export const ANY_LIMIT_SQL = anyLimitSql({ organizationId: '$1', scopeKind: '$2', scopeId: '$3::uuid', botId: '$4::uuid' });

/** The credits' `balance` and `reserved` of organization $1 (text), selected from its `credit_accounts` row. */
export const CREDITS_SQL = `SELECT (SELECT coalesce(sum(amount_micros), 0) FROM credit_entries WHERE organization_id = $1)::text AS balance,
                    ((SELECT coalesce(sum(reserved_micros), 0) FROM usage_holds WHERE organization_id = $1 AND released_at IS NULL)
                     + (SELECT coalesce(sum(reserved_micros), 0) FROM usage_records
                         WHERE organization_id = $1 AND status = 'unknown' AND released_at IS NULL))::text AS reserved`;

/** Who a call is billed to: the budgets of the organization, its Bot and its member apply. */
export interface BillingScope {
  readonly organizationId: string;
  readonly scopeKind: string;
  readonly scopeId: string;
  readonly botId: string | null;
}

export const budgetUsage = {
  /**
   * Locks the budgets that apply to a call, in ID order: the first half of the one lock order
   * every reservation takes (budgets by ID, then the credit account), so two reservations never
   * wait on each other in a circle (docs/decisions/024). A statement of its own: what they spent
   * is read by the next statement, whose snapshot sees every reservation committed before the
   * locks were granted (a read in the locking statement would not, under READ COMMITTED).
   */
  async lockApplicable(tx: Queryable, scope: BillingScope): Promise<string[]> {
    const { rows } = await tx.query<{ id: string }>({
      name: 'billing.lock_budgets',
      text: `SELECT id FROM budgets
              WHERE organization_id = $1
                AND (scope_kind = 'organization' OR (scope_kind = 'bot' AND scope_id = $4::uuid)
                     OR (scope_kind = 'member' AND $2 = 'member' AND scope_id = $3::uuid))
              ORDER BY id FOR UPDATE`,
      values: [scope.organizationId, scope.scopeKind, scope.scopeId, scope.botId],
    });
    return rows.map((row) => row.id);
  },

  /** Budgets of an organization (all, or these IDs) with what they spent and hold in their current period. */
  async ofOrganization(db: Queryable, organizationId: string, ids: readonly string[] | null): Promise<BudgetStanding[]> {
    const { rows } = await db.query<StandingRow>({
      name: 'billing.budgets_of_organization',
      text: `WITH b AS (SELECT * FROM budgets WHERE organization_id = $1 AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[])))
             SELECT ${STANDING_COLUMNS} FROM b ${STANDING_JOINS} ORDER BY b.id`,
      values: [organizationId, ids],
    });
    return rows.map(toStanding);
  },

  /**
   * What a reservation reads once it holds its locks, in one statement: the standings of these
   * budgets and, when `withCredits`, the organization's credits (null without). Its snapshot
   * sees every reservation committed before the locks were granted.
   */
  async lockedStanding(
    tx: Queryable,
    organizationId: string,
    ids: readonly string[],
    withCredits: boolean,
  ): Promise<{ readonly budgets: BudgetStanding[]; readonly credits: CreditStanding | null }> {
    if (ids.length === 0 && !withCredits) return { budgets: [], credits: null };
    const { rows } = await tx.query<{ budgets: StandingRow[]; credits: { balance: string; reserved: string } | null }>({
      name: 'billing.locked_standing',
      text: `WITH b AS (SELECT * FROM budgets WHERE organization_id = $1 AND id = ANY($2::uuid[])),
                  standing AS (SELECT ${STANDING_COLUMNS} FROM b ${STANDING_JOINS}),
                  credits AS (${CREDITS_SQL} FROM credit_accounts WHERE organization_id = $1 AND $3::boolean)
             SELECT (SELECT coalesce(json_agg(standing ORDER BY standing.id), '[]'::json) FROM standing) AS budgets,
                    (SELECT row_to_json(credits) FROM credits) AS credits`,
      values: [organizationId, ids, withCredits],
    });
    const row = rows[0]!;
    return {
      budgets: row.budgets.map(toStanding),
      credits: row.credits === null ? null : { balanceMicros: BigInt(row.credits.balance), reservedMicros: BigInt(row.credits.reserved) },
    };
  },

  /** Locks the organization's credit account, after the budgets; false when it has no credits. */
  async lockCredits(tx: Queryable, organizationId: string): Promise<boolean> {
    const { rows } = await tx.query({
      name: 'billing.lock_credits',
      text: 'SELECT 1 FROM credit_accounts WHERE organization_id = $1 FOR UPDATE',
      values: [organizationId],
    });
    return rows.length > 0;
  },

  /** The organization's credits, or null when it has none (no ledger entry: credits do not limit it). */
  async credits(db: Queryable, organizationId: string): Promise<CreditStanding | null> {
    const { rows } = await db.query<{ balance: string; reserved: string }>({
      name: 'billing.credits',
      text: `${CREDITS_SQL} FROM credit_accounts WHERE organization_id = $1`,
      values: [organizationId],
    });
    const row = rows[0];
    return row === undefined ? null : { balanceMicros: BigInt(row.balance), reservedMicros: BigInt(row.reserved) };
  },
};

/** The first budget (or the credits: `null`) that has nothing left for `need` more, or undefined when all have room. */
export function exhausted(
  budgets: readonly BudgetStanding[],
  credits: CreditStanding | null,
  need: { readonly micros: bigint; readonly tokens: bigint },
): { readonly budgetId: string | null } | undefined {
  for (const b of budgets) {
    const [limit, spent, reserved, more] =
      b.limitMicros !== null ? [b.limitMicros, b.spentMicros, b.reservedMicros, need.micros] : [b.limitTokens!, b.spentTokens, b.reservedTokens, need.tokens];
    const left = limit - spent - reserved;
    if (left <= 0n || left < more) return { budgetId: b.id };
  }
  if (credits !== null) {
    const left = credits.balanceMicros - credits.reservedMicros;
    if (left <= 0n || left < need.micros) return { budgetId: null };
  }
  return undefined;
}
