import { newId } from '@openbot/domain';
import type { Caller } from '@openbot/domain';
import type { Sql } from '../database/sql';

/** Where an audit record is written: the change's own transaction. */
export type AuditWriter = Pick<Sql, 'count'>;

export interface AuditEntry {
  readonly organizationId: string;
  /** A caller; or a member known only by ID (a browser bound to them, without a credential of its own in that request). */
  readonly actor: Caller | { readonly kind: 'member'; readonly memberId: string } | { readonly kind: 'service'; readonly id: string } | { readonly kind: 'sso'; readonly id: null };
  /** e.g. `api-key.created`, `api-key.revoked`, `member.added`, `member.role-changed`, `member.removed`, `sso.configured`, `sso.login` */
  readonly action: string;
  readonly target: { readonly type: string; readonly id: string };
  /** Non-secret facts only: never a secret, key material or token. */
  readonly details?: Record<string, unknown>;
}

/**
 * Writes one audit event. Call it inside the transaction of the change it describes, so the
 * change and its audit record commit together (or neither does).
 */
export async function recordAudit(db: AuditWriter, entry: AuditEntry): Promise<void> {
  const actorKind = entry.actor.kind;
  const actorId = entry.actor.kind === 'member' ? entry.actor.memberId : entry.actor.kind === 'service' ? entry.actor.id : null;
  await db.count(
    `INSERT INTO audit_events (id, organization_id, actor_kind, actor_id, action, target_type, target_id, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
    [newId(), entry.organizationId, actorKind, actorId, entry.action, entry.target.type, entry.target.id, JSON.stringify(entry.details ?? {})],
  );
}
