import { LimitReached, type OrganizationLimitName } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import type { OrganizationLimits } from '../config/config';

/** What an organization holds of the limits that count something it keeps (decision 076). */
export type CountedLimit = 'apiKeys' | 'fileBytes' | 'memoryItems';

/**
 * How much of each counted limit an organization uses now, in one statement each. Live API keys
 * only (revoked and expired keys authenticate nothing); file bytes of ready files and of uploads
 * still streaming is unknown until they commit, so only ready files count; every memory item.
 */
const USAGE: Readonly<Record<CountedLimit, string>> = {
  apiKeys: `SELECT count(*)::bigint AS used FROM api_keys
             WHERE organization_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
  fileBytes: `SELECT coalesce(sum(bytes), 0)::bigint AS used FROM files WHERE organization_id = $1 AND state = 'ready'`,
  memoryItems: 'SELECT count(*)::bigint AS used FROM memory_items WHERE organization_id = $1',
};

/** How the limits read in an error message. */
const DESCRIPTIONS: Readonly<Record<OrganizationLimitName, string>> = {
  apiKeys: 'live API keys',
  streams: 'open event streams',
  queuedTurnsPerChat: 'queued Turns in one Chat',
  toolCallsPerStep: 'tool calls in one model step',
  runningTurns: 'running Turns',
  fileBytes: 'bytes of stored files',
  memoryItems: 'memory items',
};

/** The counted limit's current use by the organization (no lock: a reading for `GET /v1/limits`). */
export async function usageOf(db: Queryable, organizationId: string, limit: CountedLimit): Promise<number> {
  const { rows } = await db.query<{ used: string }>({ name: `limits.usage_${limit}`, text: USAGE[limit], values: [organizationId] });
  return Number(rows[0]!.used);
}

/**
 * Takes the organization's lock of one limit until the transaction ends. Every check of that
 * limit takes it before counting, so two requests racing to add the last item are serialized:
 * the second counts the first's insert (or its rollback) and the limit is never exceeded.
 */
export async function lockLimit(tx: Queryable, organizationId: string, limit: OrganizationLimitName): Promise<void> {
  await tx.query({
    name: 'limits.lock_organization_limit',
    text: `SELECT pg_advisory_xact_lock(hashtextextended('organization-limit:' || $1 || ':' || $2, 0))`,
    values: [limit, organizationId],
  });
}

/**
 * In the transaction that adds `adding` (1 item, or a file's bytes) to a counted limit: takes the
 * limit's lock, counts, and refuses with 409 LimitReached naming the limit when the addition would
 * pass it. The insert that follows in the same transaction is covered by the lock.
 */
export async function checkRoomFor(tx: Queryable, organizationId: string, limits: OrganizationLimits, limit: CountedLimit, adding = 1): Promise<void> {
  await lockLimit(tx, organizationId, limit);
  const used = await usageOf(tx, organizationId, limit);
  if (used + adding > limits[limit]) throw limitReached(limit, limits[limit]);
}

/** How many more items of a counted limit fit now; the caller holds the limit's lock (lockLimit). */
export async function roomLeft(tx: Queryable, organizationId: string, limits: OrganizationLimits, limit: CountedLimit): Promise<number> {
  return Math.max(0, limits[limit] - (await usageOf(tx, organizationId, limit)));
}

/** 409 LimitReached naming the limit and its value. */
export function limitReached(limit: OrganizationLimitName, value: number): LimitReached {
  return new LimitReached(limit, value, `This organization has reached its limit of ${value} ${DESCRIPTIONS[limit]} (\`${limit}\`); remove some or ask the operator to raise it.`);
}

/** The sentence a refusal of a rate-like limit (streams, queued or running Turns) carries. */
export function limitMessage(limit: OrganizationLimitName, value: number): string {
  return `This organization has reached its limit of ${value} ${DESCRIPTIONS[limit]} (\`${limit}\`); retry after the Retry-After seconds.`;
}
