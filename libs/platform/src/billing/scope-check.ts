import { isUuid, type InputIssue } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { BudgetScopeKind } from './billing-views';

/**
 * A budget's or rate limit's scope: `id` is required for `bot` and `member` and must name one of
 * the organization's (400 on `scope.id` otherwise, as an unknown provider is), refused for
 * `organization`.
 */
export async function scopeIssues(db: Queryable, organizationId: string, scope: { readonly kind: BudgetScopeKind; readonly id: string | null }): Promise<InputIssue[]> {
  const { kind, id } = scope;
  if (kind === 'organization') return id === null ? [] : [{ path: 'scope.id', message: 'scope.id is refused for the organization scope' }];
  if (id === null) return [{ path: 'scope.id', message: `scope.id is required for a ${kind} scope` }];
  const table = kind === 'bot' ? 'bots' : 'members';
  const found = isUuid(id) ? (await db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND organization_id = $2`, [id, organizationId])).rows.length > 0 : false;
  return found ? [] : [{ path: 'scope.id', message: `the organization has no ${kind} ${id}` }];
}
