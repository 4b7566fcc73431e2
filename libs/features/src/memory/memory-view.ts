import { includedRoles, InvalidInput, isMemberRole, isUuid, MEMBER_ROLES, type InputIssue, type MemberRole } from '@openbot/domain';

// A Bot's memory switches are part of the Bot (bots/bot-memory.ts: memory sits above bots and reads them, never the reverse).
export { DEFAULT_BOT_MEMORY, MEMORY_LEARN_ACCESS, type BotMemorySettings, type MemoryLearnAccess } from '../bots/bot-memory';

/** Who may select an item for a Turn, and read its content over the API. */
export type MemoryAccess =
  | { readonly kind: 'bot' }
  | { readonly kind: 'members'; readonly ids: readonly string[] }
  | { readonly kind: 'roles'; readonly roles: readonly MemberRole[] };

export const MEMORY_SOURCE_TYPES = ['chat', 'turn', 'file', 'url'] as const;
export type MemorySourceType = (typeof MEMORY_SOURCE_TYPES)[number];

/** Where an item came from: an item whose source the reader can no longer see is not selected for them (MEM-01). */
export interface MemorySource {
  readonly type: MemorySourceType;
  readonly id: string;
}

export const MEMORY_STATUSES = ['active', 'archived'] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];

/** An item as lists show it: everything but its content. */
export interface MemoryItemView {
  readonly id: string;
  readonly botId: string;
  readonly tags: readonly string[];
  readonly access: MemoryAccess;
  readonly sources: readonly MemorySource[];
  readonly status: MemoryStatus;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One item with its opened content (`GET …/memories/{id}`). */
export interface MemoryItemWithContent extends MemoryItemView {
  readonly content: string;
}

/** Who reads: a Turn's member (with its role) or a service; services only see `bot` items. */
export type MemoryReader = { readonly kind: 'member'; readonly memberId: string; readonly role: MemberRole } | { readonly kind: 'service' };

export const MAX_MEMORY_CONTENT_CHARS = 20_000;
export const MAX_MEMORY_TAGS = 32;
export const MAX_MEMORY_SOURCES = 16;
const TAG = /^[\p{L}\p{N}_.:-]{1,64}$/u;

/** The columns of a MemoryItemView (never the content). */
export const MEMORY_VIEW_COLUMNS = `id, bot_id AS "botId", tags, access, sources, status, created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The roles the reader's role (the SQL text `role`) includes, as a text[] (decision 085): a
 * `roles: ["admin"]` item is for admins and owners. NULL for a service (its role is null).
 */
function includedRolesSql(role: string): string {
  const cases = MEMBER_ROLES.map((r) => `WHEN '${r}' THEN '{${includedRoles(r).join(',')}}'::text[]`).join(' ');
  return `(CASE ${role}::text ${cases} END)`;
}

/**
 * The access rule as an SQL condition on the `access` column of `alias` (IDN-08: applied in the
 * query, never after it): `member` and `role` name the parameters with the reader's member ID
 * and role (both null for a service, which reads only `bot` items). A `roles` rule admits a
 * reader whose role is one of them or above one of them (decision 085).
 */
export function accessAdmitsSql(alias: string, member: string, role: string): string {
  return `(${alias}.access->>'kind' = 'bot'
            OR (${alias}.access->>'kind' = 'members' AND ${member}::text IS NOT NULL AND ${alias}.access->'ids' ? ${member}::text)
            OR (${alias}.access->>'kind' = 'roles' AND ${role}::text IS NOT NULL AND ${alias}.access->'roles' ?| ${includedRolesSql(role)}))`;
}

/** Tags are trimmed, lower-cased and deduplicated, in the order first given. */
export function normalizeTags(tags: readonly string[], path = 'tags'): string[] {
  const issues: InputIssue[] = [];
  const out: string[] = [];
  tags.forEach((raw, index) => {
    const tag = raw.trim().toLowerCase();
    if (!TAG.test(tag)) issues.push({ path: `${path}.${index}`, message: 'a tag is 1 to 64 letters, digits, "_", ".", ":" or "-"' });
    else if (!out.includes(tag)) out.push(tag);
  });
  if (tags.length > MAX_MEMORY_TAGS) issues.push({ path, message: `at most ${MAX_MEMORY_TAGS} tags` });
  if (issues.length > 0) throw new InvalidInput(issues);
  return out;
}

/** Checks an access rule's shape: member IDs are UUIDs, roles are roles, neither list is empty. */
export function checkAccess(access: MemoryAccess): MemoryAccess {
  const issues: InputIssue[] = [];
  if (access.kind === 'members') {
    if (!Array.isArray(access.ids) || access.ids.length === 0 || access.ids.length > 100) issues.push({ path: 'access.ids', message: 'ids must name 1 to 100 members' });
    else access.ids.forEach((id, i) => (isUuid(id) ? undefined : issues.push({ path: `access.ids.${i}`, message: 'must be a member ID' })));
  } else if (access.kind === 'roles') {
    if (!Array.isArray(access.roles) || access.roles.length === 0) issues.push({ path: 'access.roles', message: 'roles must name at least one role' });
    else access.roles.forEach((role, i) => (isMemberRole(role) ? undefined : issues.push({ path: `access.roles.${i}`, message: 'must be owner, admin, member or viewer' })));
  } else if (access.kind !== 'bot') {
    issues.push({ path: 'access.kind', message: 'kind must be bot, members or roles' });
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  if (access.kind === 'members') return { kind: 'members', ids: [...new Set(access.ids.map((id) => id.toLowerCase()))] };
  if (access.kind === 'roles') return { kind: 'roles', roles: [...new Set(access.roles)] };
  return { kind: 'bot' };
}

/** Checks source links: chat and turn IDs are UUIDs (files too), a url is an absolute http(s) URL. */
export function checkSources(sources: readonly MemorySource[]): MemorySource[] {
  const issues: InputIssue[] = [];
  if (sources.length > MAX_MEMORY_SOURCES) issues.push({ path: 'sources', message: `at most ${MAX_MEMORY_SOURCES} sources` });
  sources.forEach((source, i) => {
    if (!(MEMORY_SOURCE_TYPES as readonly string[]).includes(source.type)) issues.push({ path: `sources.${i}.type`, message: 'type must be chat, turn, file or url' });
    else if (source.type === 'url' ? !/^https?:\/\/\S+$/i.test(source.id) : !isUuid(source.id)) {
      issues.push({ path: `sources.${i}.id`, message: source.type === 'url' ? 'a url source is an absolute http or https URL' : `a ${source.type} source is its ID` });
    }
  });
  if (issues.length > 0) throw new InvalidInput(issues);
  return sources.map((s) => ({ type: s.type, id: s.type === 'url' ? s.id : s.id.toLowerCase() }));
}

/** A rough token count (4 characters a token, as the context fitting estimates). */
export function contentTokens(content: string): number {
  return Math.max(1, Math.ceil(content.length / 4));
}
