import type { ExecutionId } from '@openbot/domain';
import type { EngineInTransaction } from '@openbot/engine';
import { ORGANIZATION_FILE_SWEEP } from './workflows/organization-file-sweep.workflow';

/**
 * What deleting an organization owes its files (FW-08, decision 036): call it in the
 * transaction that deletes the organization's row. The file rows go with the row (ON DELETE
 * CASCADE); this submits, in the same transaction, the `files.organization-sweep` execution that
 * then owns the bytes. There is no moment in which the rows are gone and nothing owns the
 * objects. It runs once that transaction committed.
 */
export function submitOrganizationFileSweep(engine: EngineInTransaction, organizationId: string): Promise<ExecutionId> {
  return engine.submit({
    ...ORGANIZATION_FILE_SWEEP.command({ organizationId }),
    scope: { kind: 'service', id: organizationId, organizationId },
    resource: { type: 'organization', id: organizationId },
  });
}
