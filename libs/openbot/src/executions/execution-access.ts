import { canSteerOthersWork, Forbidden, isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import type { DataSource } from 'typeorm';

/**
 * The access rule of the execution routes, applied inside SQL (IDN-08): a member reads its
 * organization's executions only; platform executions (no organization) are never visible
 * through organization endpoints (IDN-11). Malformed, unknown and foreign IDs are one NotFound.
 */
export async function assertExecutionVisible(dataSource: DataSource, caller: MemberCaller, executionId: string): Promise<void> {
  if (!isUuid(executionId)) throw new NotFound('Execution');
  const rows = (await dataSource.query('SELECT 1 FROM executions WHERE id = $1 AND organization_id = $2', [
    executionId,
    caller.organizationId,
  ])) as unknown[];
  if (rows.length === 0) throw new NotFound('Execution');
}

/**
 * The rule of the routes that write into an execution's work (an outcome_unknown decision): it
 * must be visible, and the caller its actor (the member it works as: `scope`, which its children
 * inherit), an owner or an admin. Another member could otherwise decide what the work goes on
 * believing, under its actor's identity.
 */
export async function assertExecutionSteerable(dataSource: DataSource, caller: MemberCaller, executionId: string): Promise<void> {
  if (!isUuid(executionId)) throw new NotFound('Execution');
  const [row] = (await dataSource.query('SELECT scope_kind, scope_id FROM executions WHERE id = $1 AND organization_id = $2', [
    executionId,
    caller.organizationId,
  ])) as Array<{ scope_kind: string; scope_id: string }>;
  if (row === undefined) throw new NotFound('Execution');
  const ownWork = row.scope_kind === 'member' && row.scope_id === caller.memberId;
  if (!ownWork && !canSteerOthersWork(caller)) {
    throw new Forbidden("Only the member this execution works for, an owner or an admin may decide another member's execution.");
  }
}
