import { InvalidInput, isUuid, type InputIssue } from '@openbot/domain';
import type { ApproverPolicy } from './approval-policy';

/**
 * The members a Bot's tools name as approvers (decision 075) must be current members of the
 * Bot's organization: another organization's member, a removed one or an unknown ID is an
 * InvalidInput on `tools.<n>.approvers.members.<i>`. The organization is in the query (IDN-08).
 */
export async function checkApproverMembers(
  db: { rows<T>(sql: string, params: readonly unknown[]): Promise<T[]> },
  organizationId: string,
  tools: ReadonlyArray<{ readonly approvers?: ApproverPolicy }>,
): Promise<void> {
  const named = tools.flatMap((tool, index) => (tool.approvers?.members ?? []).map((memberId, i) => ({ path: `tools.${index}.approvers.members.${i}`, memberId })));
  const wanted = named.filter((n) => isUuid(n.memberId));
  if (wanted.length === 0) return;
  const found = await db.rows<{ id: string }>('SELECT id FROM members WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND removed_at IS NULL', [
    organizationId,
    [...new Set(wanted.map((n) => n.memberId))],
  ]);
  const known = new Set(found.map((row) => row.id.toLowerCase()));
  const issues: InputIssue[] = wanted.filter((n) => !known.has(n.memberId.toLowerCase())).map((n) => ({ path: n.path, message: 'this member does not exist in this organization' }));
  if (issues.length > 0) throw new InvalidInput(issues);
}
