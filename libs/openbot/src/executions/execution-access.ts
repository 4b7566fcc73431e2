import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
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
