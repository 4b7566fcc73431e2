import type { MemberCaller } from './caller';
import { isUuid } from './ids';
import { isPermission, PERMISSIONS, type Permission } from './roles';

/**
 * Who an execution works for and as whom it acts (IDN-01). The parts stay separate because each
 * is checked on its own: the resource owner (an organization, or the platform), the current actor
 * (a member or a ServiceIdentity), the original token that started the work, the Bot it runs, the
 * delegation chain that led to it, and the execution it was derived from. Stored sealed with its
 * execution (SEC-01) and checked again on restore and before outside sends (IDN-06).
 */
export interface ExecutionIdentity {
  readonly owner: IdentityOwner;
  readonly actor: IdentityActor;
  /** The credential that started the work; null when there was none (work started by the platform). */
  readonly token: IdentityToken | null;
  readonly botId: string | null;
  /** Parent Bots that handed this work on, oldest first (the root Turn's Bot first); empty for work nobody delegated. */
  readonly delegation: readonly DelegationLink[];
  /** The execution this identity was derived from (a child's parent); null for a submitted command. */
  readonly sourceExecutionId: string | null;
  /** Upper bounds every caller added; they only ever narrow (IDN-02). */
  readonly limits: IdentityLimits;
  /**
   * Permissions the work needs for as long as it runs (e.g. `chats.write` for a Turn): every check
   * verifies the actor's current rights still include them, so a role downgrade stops the work at
   * its next check (IDN-06). Absent in identities stored before it existed: nothing required.
   */
  readonly requires?: readonly Permission[];
}

/** The platform owns platform services' work; it has no ID. */
export type IdentityOwner = { readonly kind: 'organization'; readonly id: string } | { readonly kind: 'platform'; readonly id: null };

export interface IdentityActor {
  readonly kind: 'member' | 'service';
  readonly id: string;
}

/** Named by the field that authenticated the request, never by a secret's prefix (IDN-04). */
export interface IdentityToken {
  readonly kind: 'api-key' | 'session' | 'service';
  readonly id: string;
}

/** One hop of delegation: the Bot that handed the work on, and the execution it did so from. */
export interface DelegationLink {
  readonly botId: string;
  readonly executionId: string;
}

export interface IdentityLimits {
  /** What the work may do at most: the intersection of every limit along the way. */
  readonly permissions: readonly Permission[];
}

/**
 * The identity of work a member starts. The token comes from the field the authentication step
 * filled (`apiKeyId` or `sessionId`), not from the Turn's author or a string prefix (IDN-04).
 */
export function identityForMember(
  caller: MemberCaller,
  options: { readonly botId?: string | null; readonly requires?: readonly Permission[] } = {},
): ExecutionIdentity {
  const sessionId = caller.sessionId ?? null;
  if (caller.apiKeyId !== null && sessionId !== null) {
    // One request is authenticated by one credential; both set is a bug upstream, not a choice to make here.
    throw new Error('a caller cannot carry both an API key and a session');
  }
  const token: IdentityToken | null =
    caller.apiKeyId !== null ? { kind: 'api-key', id: caller.apiKeyId } : sessionId !== null ? { kind: 'session', id: sessionId } : null;
  return {
    owner: { kind: 'organization', id: caller.organizationId },
    actor: { kind: 'member', id: caller.memberId },
    token,
    botId: options.botId ?? null,
    delegation: [],
    sourceExecutionId: null,
    limits: { permissions: [...caller.permissions] },
    ...(options.requires !== undefined ? { requires: [...options.requires] } : {}),
  };
}

/**
 * The identity of work a ServiceIdentity starts (IDN-10): owned by its organization, or by the
 * platform when it has none; no member ID. Its own service record is its credential. Without a
 * `permissions` limit it is bounded only by the service's own access rules.
 */
export function identityForService(
  service: { readonly id: string; readonly organizationId: string | null },
  options: { readonly botId?: string | null; readonly permissions?: readonly Permission[] } = {},
): ExecutionIdentity {
  return {
    owner: service.organizationId === null ? { kind: 'platform', id: null } : { kind: 'organization', id: service.organizationId },
    actor: { kind: 'service', id: service.id },
    token: { kind: 'service', id: service.id },
    botId: options.botId ?? null,
    delegation: [],
    sourceExecutionId: null,
    limits: { permissions: [...(options.permissions ?? PERMISSIONS)] },
  };
}

/**
 * The identity of work derived from other work (IDN-02): owner, actor, token, Bot and delegation
 * are kept; every limit of the source stays, and a limit added here can only narrow it (the
 * permissions are the intersection, never a union).
 */
export function childIdentity(
  parent: ExecutionIdentity,
  options: {
    readonly sourceExecutionId?: string | null;
    readonly addPermissionsLimit?: readonly Permission[];
    /** A delegation hop: the child runs `toBotId`, handed on by the source's Bot from the source execution. */
    readonly delegatedTo?: { readonly botId: string };
  } = {},
): ExecutionIdentity {
  const added = options.addPermissionsLimit;
  const source = options.sourceExecutionId === undefined ? parent.sourceExecutionId : options.sourceExecutionId;
  const hop = options.delegatedTo !== undefined && parent.botId !== null && source !== null ? [{ botId: parent.botId, executionId: source }] : [];
  return {
    owner: parent.owner,
    actor: parent.actor,
    token: parent.token,
    botId: options.delegatedTo?.botId ?? parent.botId,
    delegation: [...parent.delegation, ...hop],
    sourceExecutionId: source,
    limits: { permissions: added === undefined ? [...parent.limits.permissions] : parent.limits.permissions.filter((p) => added.includes(p)) },
    // What the source's work needs, the child's needs too: losing it stops both.
    ...(parent.requires !== undefined ? { requires: [...parent.requires] } : {}),
  };
}

/**
 * What a delegated task may do at most (IDN-02): run its Turn and read what that needs. A Bot's
 * task never manages members, keys, models or billing, and never decides approvals, whatever
 * its source could: a saved approval stays a person's decision (IDN-07).
 */
export const DELEGATED_TASK_PERMISSIONS: readonly Permission[] = ['organization.read', 'bots.read', 'chats.read', 'chats.write', 'executions.read', 'usage.read'];

/** Whether the identity's limits allow `permission`. */
export function identityAllows(identity: ExecutionIdentity, permission: Permission): boolean {
  return identity.limits.permissions.includes(permission);
}

/**
 * The permissions a stored identity allows (its limits), or null when there is none or it is
 * malformed: the caller then assumes nothing narrower than the actor's role (decision 075).
 */
export function identityPermissions(stored: unknown): Permission[] | null {
  if (stored === null || stored === undefined) return null;
  try {
    return [...parseExecutionIdentity(stored).limits.permissions];
  } catch (error) {
    if (error instanceof MalformedIdentity) return null;
    throw error;
  }
}

/** A stored identity that does not have the shape of one (it is then treated as invalid, never guessed). */
export class MalformedIdentity extends Error {
  constructor(what: string) {
    super(`the stored execution identity is malformed: ${what}`);
  }
}

/** Reads a stored identity back, checking every field; throws MalformedIdentity otherwise. */
export function parseExecutionIdentity(value: unknown): ExecutionIdentity {
  const o = record(value, 'identity');
  const owner = record(o.owner, 'owner');
  let parsedOwner: IdentityOwner;
  if (owner.kind === 'organization') parsedOwner = { kind: 'organization', id: uuid(owner.id, 'owner.id') };
  else if (owner.kind === 'platform' && owner.id === null) parsedOwner = { kind: 'platform', id: null };
  else throw new MalformedIdentity('owner');
  const actor = record(o.actor, 'actor');
  if (actor.kind !== 'member' && actor.kind !== 'service') throw new MalformedIdentity('actor.kind');
  if (actor.kind === 'member' && parsedOwner.kind !== 'organization') throw new MalformedIdentity('a member outside an organization');
  let token: IdentityToken | null = null;
  if (o.token !== null) {
    const t = record(o.token, 'token');
    if (t.kind !== 'api-key' && t.kind !== 'session' && t.kind !== 'service') throw new MalformedIdentity('token.kind');
    token = { kind: t.kind, id: uuid(t.id, 'token.id') };
  }
  if (!Array.isArray(o.delegation)) throw new MalformedIdentity('delegation');
  const delegation = o.delegation.map((link: unknown, i) => {
    const l = record(link, `delegation.${i}`);
    return { botId: uuid(l.botId, `delegation.${i}.botId`), executionId: uuid(l.executionId, `delegation.${i}.executionId`) };
  });
  const limits = record(o.limits, 'limits');
  if (!Array.isArray(limits.permissions) || !limits.permissions.every((p) => typeof p === 'string' && isPermission(p))) {
    throw new MalformedIdentity('limits.permissions');
  }
  if (o.requires !== undefined && (!Array.isArray(o.requires) || !o.requires.every((p) => typeof p === 'string' && isPermission(p)))) {
    throw new MalformedIdentity('requires');
  }
  return {
    ...(Array.isArray(o.requires) ? { requires: o.requires as Permission[] } : {}),
    owner: parsedOwner,
    actor: { kind: actor.kind, id: uuid(actor.id, 'actor.id') },
    token,
    botId: o.botId === null ? null : uuid(o.botId, 'botId'),
    delegation,
    sourceExecutionId: o.sourceExecutionId === null ? null : uuid(o.sourceExecutionId, 'sourceExecutionId'),
    limits: { permissions: limits.permissions as Permission[] },
  };
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new MalformedIdentity(what);
  return value as Record<string, unknown>;
}

function uuid(value: unknown, what: string): string {
  if (typeof value !== 'string' || !isUuid(value)) throw new MalformedIdentity(what);
  return value;
}
