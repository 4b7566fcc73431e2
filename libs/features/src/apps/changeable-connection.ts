import { canSteerOthersWork, Forbidden, isUuid, type MemberCaller } from '@openbot/domain';
import type { Sql } from '../../../platform/src/database/sql';
import { connectionNotFound } from './app-failures';
import { VISIBLE_CONNECTION } from './app-view';

/** An organization connection is changed only with `apps.manage`; a member's own with `apps.write` (the route's permission). */
export function assertMayChange(caller: MemberCaller, owner: string): void {
  if (owner === 'organization' && !caller.permissions.includes('apps.manage')) {
    throw new Forbidden('Changing an organization connection needs the apps.manage permission.');
  }
}

/**
 * Locks a connection the caller sees (`share`: a check, `update`: a delete) inside `tx` and
 * checks the caller may change it. Unknown, foreign and malformed IDs are one NotFound.
 */
export async function lockChangeableConnection(tx: Sql, caller: MemberCaller, connectionId: string, lock: 'share' | 'update'): Promise<void> {
  if (!isUuid(connectionId)) throw connectionNotFound();
  const row = await tx.one<{ owner: string }>(
    `SELECT owner FROM app_connections WHERE ${VISIBLE_CONNECTION} AND id = $4 ${lock === 'share' ? 'FOR SHARE' : 'FOR UPDATE'}`,
    [caller.organizationId, caller.memberId, canSteerOthersWork(caller), connectionId],
  );
  if (row === undefined) throw connectionNotFound();
  assertMayChange(caller, row.owner);
}
