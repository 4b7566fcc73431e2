import type { SealedRecordId } from '@openbot/domain';
import type { Remote } from '@openbot/protocol';
import type { Sql } from '../../../platform/src/database/sql';
import type { ConnectionTarget } from '../apps/app-client';
import type { ConnectionSecrets, StoredValue } from '../apps/app-view';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';

/**
 * What a developer test's run connects to: the remote checked when it started, its values as
 * stored and its sealed literals, and the test as the holder of the developer's own grant
 * (DEVT-01). Null when the test (or its App's remote) is gone.
 */
export async function developerTestTarget(deps: { readonly db: Sql; readonly sealed: SealedRecords }, testId: string): Promise<ConnectionTarget | null> {
  const row = await deps.db.one<{
    organization_id: string;
    remote: Remote | null;
    variables: Record<string, StoredValue>;
    headers: Record<string, StoredValue>;
    secrets_record_id: string | null;
  }>(
    // A test started before values existed has no prepared remote: the App's remote of the same url.
    `SELECT t.organization_id, coalesce(t.prepared_remote, (SELECT r FROM jsonb_array_elements(a.remotes) r WHERE r->>'url' = t.remote LIMIT 1)) AS remote,
            t.variables, t.headers, t.secrets_record_id
       FROM app_developer_tests t JOIN apps a ON a.id = t.app_id WHERE t.id = $1`,
    [testId],
  );
  if (row === undefined || row.remote === null) return null;
  const secrets = row.secrets_record_id === null ? { headers: {}, variables: {} } : (((await deps.sealed.get(row.secrets_record_id as SealedRecordId))?.value as ConnectionSecrets | undefined) ?? { headers: {}, variables: {} });
  return { organizationId: row.organization_id, remote: row.remote, variables: row.variables, headers: row.headers, secrets, developerTestId: testId };
}
