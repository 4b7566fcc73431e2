import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { Database } from '../../database/sql';
import { budgetUsage, type BudgetStanding } from '../budget-usage';
import type { BudgetPeriod, BudgetScopeKind, BudgetView } from '../billing-views';

interface BudgetRow {
  id: string;
  scope_kind: BudgetScopeKind;
  scope_id: string | null;
  period: BudgetPeriod;
  created_at: Date;
}

/** Budgets with what they spent and hold in the current period (all of the organization, or one). */
export async function readBudgets(db: Queryable, organizationId: string, page: { after: string | null; limit: number } | { id: string }): Promise<BudgetView[]> {
  const one = 'id' in page;
  const { rows } = await db.query<BudgetRow>(
    one
      ? 'SELECT id, scope_kind, scope_id, period, created_at FROM budgets WHERE organization_id = $1 AND id = $2'
      : 'SELECT id, scope_kind, scope_id, period, created_at FROM budgets WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3',
    one ? [organizationId, page.id] : [organizationId, page.after, page.limit],
  );
  if (rows.length === 0) return [];
  const standings = new Map((await budgetUsage.ofOrganization(db, organizationId, rows.map((r) => r.id))).map((s) => [s.id, s]));
  return rows.map((row) => toView(row, standings.get(row.id)!));
}

export async function readBudget(db: Queryable, organizationId: string, id: string): Promise<BudgetView | null> {
  return (await readBudgets(db, organizationId, { id }))[0] ?? null;
}

function toView(row: BudgetRow, s: BudgetStanding): BudgetView {
  const money = s.limitMicros !== null;
  return {
    id: row.id,
    scope: { kind: row.scope_kind, id: row.scope_id },
    period: row.period,
    limitMicros: s.limitMicros === null ? null : Number(s.limitMicros),
    limitTokens: s.limitTokens === null ? null : Number(s.limitTokens),
    spentMicros: money ? Number(s.spentMicros) : null,
    reservedMicros: money ? Number(s.reservedMicros) : null,
    spentTokens: money ? null : Number(s.spentTokens),
    reservedTokens: money ? null : Number(s.reservedTokens),
    createdAt: row.created_at,
  };
}

/** One budget of the caller's organization (another organization's ID answers 404). */
export class GetBudget extends Query<BudgetView> {
  constructor(
    readonly caller: MemberCaller,
    readonly budgetId: string,
  ) {
    super();
  }
}

@QueryHandler(GetBudget)
export class GetBudgetHandler implements IQueryHandler<GetBudget> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, budgetId }: GetBudget): Promise<BudgetView> {
    const budget = isUuid(budgetId) ? await readBudget(this.db, caller.organizationId, budgetId) : null;
    if (budget === null) throw new NotFound('Budget');
    return budget;
  }
}
