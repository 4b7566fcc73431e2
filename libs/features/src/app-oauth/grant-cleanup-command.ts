import { identityForService, newId } from '@openbot/domain';
import type { EndTransaction } from '@openbot/engine';
import type { CleanupSubmitter } from '../apps/connection-grants';
import { executionIdentity } from '../../../platform/src/identity/identity-codec';
import type { TokenSet } from '@openbot/protocol';
import type { Sealer } from '../../../platform/src/sealing/sealer';
import { associatedData } from '../../../platform/src/sealing/sealed-records';
import { GRANT_CLEANUP } from './grant-cleanup.workflow';
import { SEALED } from './oauth-records';

const CLEANUP_SERVICE = 'app-oauth-cleanup';

/**
 * The ServiceIdentity of an organization's grant cleanup (GRANT-01): cleanup runs as it, so a
 * member who lost access (or left) does not stop the revocation of what their work obtained.
 */
export async function cleanupService(tx: EndTransaction, organizationId: string): Promise<string> {
  await tx.query(
    `INSERT INTO services (id, organization_id, name) SELECT $1, $2, $3
      WHERE NOT EXISTS (SELECT 1 FROM services WHERE organization_id = $2 AND name = $3 AND disabled_at IS NULL)`,
    [newId(), organizationId, CLEANUP_SERVICE],
  );
  const { rows } = await tx.query(`SELECT id FROM services WHERE organization_id = $1 AND name = $2 AND disabled_at IS NULL ORDER BY created_at, id LIMIT 1`, [organizationId, CLEANUP_SERVICE]);
  return (rows[0] as { id: string }).id;
}

/** Seals a token pair in the caller's transaction and answers its record ID. */
export async function sealTokensIn(tx: EndTransaction, sealer: Sealer, tokens: TokenSet): Promise<string> {
  const id = newId();
  const envelope = sealer.seal(Buffer.from(JSON.stringify(tokens), 'utf8'), associatedData(id, SEALED.tokens));
  await tx.query('INSERT INTO sealed_records (id, purpose, key_id, data) VALUES ($1, $2, $3, $4)', [id, SEALED.tokens, envelope.keyId, envelope.data]);
  return id;
}

/** A grant result to save with its cleanup command (GRANT-01). */
export interface GrantResultToSave {
  readonly callId: string;
  readonly kind: 'exchange' | 'refresh' | 'replaced' | 'removed';
  readonly organizationId: string;
  readonly registrationId: string;
  /** The grant lineage: the connection or developer test whose sign-in obtained the pair (GRANT-04, decision 067). */
  readonly lineageId: string | null;
  readonly tokensRecordId: string;
  /** The execution whose call obtained it: its cleanup waits for that execution's end (GRANT-03). */
  readonly sourceExecutionId: string | null;
  readonly installed: boolean;
}

// The submitter's vocabulary belongs to the port apps owns for grant handover (apps/connection-grants.ts).
export type { CleanupSubmitter } from '../apps/connection-grants';

/**
 * Saves a grant result and its cleanup command in the caller's transaction (GRANT-01). The
 * cleanup is `held` when its source still runs (the source's end admits it); otherwise it is
 * submitted to run (recovered by any node). Idempotent by call ID: a late result saved twice
 * keeps one row and one cleanup. Answers the result row's ID.
 */

export async function saveGrantResult(tx: EndTransaction, submitter: CleanupSubmitter, result: GrantResultToSave, options: { readonly held: boolean }): Promise<{ resultId: string }> {
  const id = newId();
  const inserted = await tx.query(
    `INSERT INTO app_oauth_grant_results (id, call_id, kind, source_execution_id, organization_id, registration_id, tokens_record_id, installed_at, lineage_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::boolean THEN now() END, $9) ON CONFLICT (call_id) DO NOTHING RETURNING id`,
    [id, result.callId, result.kind, result.sourceExecutionId, result.organizationId, result.registrationId, result.tokensRecordId, result.installed, result.lineageId],
  );
  if (inserted.rows.length === 0) {
    const { rows } = await tx.query('SELECT id FROM app_oauth_grant_results WHERE call_id = $1', [result.callId]);
    return { resultId: (rows[0] as { id: string }).id };
  }
  if (result.installed) return { resultId: id };
  const serviceId = await cleanupService(tx, result.organizationId);
  const executionId = await submitter.submit(
    {
      ...GRANT_CLEANUP.command({ resultId: id, sourceExecutionId: result.sourceExecutionId }),
      scope: { kind: 'service', id: serviceId, organizationId: result.organizationId },
      identity: executionIdentity.encode(identityForService({ id: serviceId, organizationId: result.organizationId })),
      resource: { type: 'app-oauth-grant-result', id },
    },
    { held: options.held },
  );
  await tx.query('UPDATE app_oauth_grant_results SET cleanup_execution_id = $2 WHERE id = $1', [id, executionId]);
  return { resultId: id };
}

/**
 * Hands a connection's (or a developer test's: `holderId` is either) installed grant to cleanup in
 * the caller's transaction (GRANT-03, CONN-01): its pair becomes a `replaced` or `removed` grant
 * result; the holder row goes in the same transaction (GRANT-05). Its cleanup waits for
 * `sourceExecutionId` to end when one is given (a developer test removed while its run may still
 * hold the connection open), else for no source. The grant row itself is deleted for a removal,
 * and kept (to take the new pair) for a replacement.
 */
export async function handOverGrant(
  tx: EndTransaction,
  submit: CleanupSubmitter,
  holderId: string,
  kind: 'replaced' | 'removed',
  sourceExecutionId: string | null = null,
): Promise<void> {
  const { rows } = await tx.query('SELECT id, organization_id, registration_id, tokens_record_id, version FROM app_oauth_grants WHERE connection_id = $1 OR developer_test_id = $1 FOR UPDATE', [holderId]);
  const grant = rows[0] as { id: string; organization_id: string; registration_id: string; tokens_record_id: string; version: number } | undefined;
  if (grant === undefined) return;
  await saveGrantResult(
    tx,
    submit,
    { callId: `grant:${grant.id}:v${grant.version}:${kind}`, kind, organizationId: grant.organization_id, registrationId: grant.registration_id, lineageId: holderId, tokensRecordId: grant.tokens_record_id, sourceExecutionId, installed: false },
    { held: false },
  );
  if (kind === 'removed') {
    await tx.query('DELETE FROM app_oauth_grant_uses WHERE id = $1', [grant.id]);
    await tx.query('DELETE FROM app_oauth_grants WHERE id = $1', [grant.id]);
  }
}
