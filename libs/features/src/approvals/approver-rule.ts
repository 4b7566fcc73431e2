import { canSteerOthersWork, Forbidden, MEMBER_ROLES, ROLE_PERMISSIONS, type MemberCaller } from '@openbot/domain';
import { mayUseVault } from '../../../platform/src/vaults/vault-rights';

/**
 * Who may decide an approval (decision 075), as SQL over `approvals a`, so the inbox filters in
 * the query (IDN-08) and the decision answers by the same rule (IDN-07):
 *
 * - **named**: the member whose message started the Turn, owners and admins (the rule of pause, the
 *   outcome decision and client tool outputs: `canSteerOthersWork` or one's own work), and the
 *   roles and members the tool's `approvers` names;
 * - **second person**: when the tool asks for one, the Turn's own member is not an approver;
 * - **no wider rights**: the Turn's rights (its identity's permissions — the role narrowed by the
 *   key's scopes when the Turn began — within its member's current role) must all be the caller's
 *   (role ∩ key scopes), and so must the Vaults its member may use (owners and admins: every one).
 *
 * `APPROVER_FROM` joins what the rule reads; `approverFacts(n)` answers each part, with the
 * caller's parameters from `$n` on (`approverParams`). Chats are visible to every member of their
 * organization, so visibility stays the organization check of each query.
 */
export const APPROVER_FROM = `JOIN chat_turns approval_turn ON approval_turn.id = a.turn_id
  LEFT JOIN members turn_member ON approval_turn.scope_kind = 'member' AND turn_member.id = approval_turn.scope_id`;

export function approverFacts(n: number): string {
  const [caller, role, steers, permissions, rolePermissions, everyVaultRoles, everyVault] = [0, 1, 2, 3, 4, 5, 6].map((i) => `$${n + i}`);
  const own = `(approval_turn.scope_kind = 'member' AND approval_turn.scope_id = ${caller}::uuid)`;
  const roleAllows = `COALESCE((${rolePermissions}::jsonb -> turn_member.role) ? right_name, false)`;
  const turnRights = `COALESCE(a.turn_permissions, ARRAY(SELECT jsonb_array_elements_text(${rolePermissions}::jsonb -> turn_member.role)))`;
  return `'approvals.decide' = ANY(${permissions}::text[]) AS "mayDecide",
    ${own} AND a.second_person AS "ownRefused",
    ${own} OR ${steers}::boolean OR ${role}::text = ANY(a.approver_roles) OR ${caller}::uuid = ANY(a.approver_member_ids) AS named,
    ARRAY(SELECT right_name FROM unnest(${turnRights}) AS right_name
           WHERE (approval_turn.scope_kind <> 'member' OR ${roleAllows}) AND NOT right_name = ANY(${permissions}::text[])
           ORDER BY right_name) AS missing,
    approval_turn.scope_kind = 'member' AND NOT ${everyVault}::boolean
      AND (COALESCE(turn_member.role = ANY(${everyVaultRoles}::text[]), false)
           OR EXISTS (SELECT 1 FROM vault_users turn_vault WHERE turn_vault.member_id = approval_turn.scope_id
                       AND NOT EXISTS (SELECT 1 FROM vault_users own_vault WHERE own_vault.vault_id = turn_vault.vault_id AND own_vault.member_id = ${caller}::uuid))) AS "widerVaults"`;
}

/** The whole rule as one condition on the facts' expressions (the inbox's WHERE). */
export function approverCondition(n: number): string {
  return `EXISTS (SELECT 1 FROM (SELECT ${approverFacts(n)}) f WHERE f."mayDecide" AND NOT f."ownRefused" AND f.named AND cardinality(f.missing) = 0 AND NOT f."widerVaults")`;
}

/** The seven parameters of `approverFacts` / `approverCondition`, in order. */
export function approverParams(caller: MemberCaller): unknown[] {
  return [
    caller.memberId,
    caller.role,
    canSteerOthersWork(caller),
    [...caller.permissions],
    JSON.stringify(ROLE_PERMISSIONS),
    EVERY_VAULT_ROLES,
    mayUseVault({ role: caller.role, granted: false }),
  ];
}

/** Roles that may use every Vault of their organization without being granted it. */
const EVERY_VAULT_ROLES = MEMBER_ROLES.filter((role) => mayUseVault({ role, granted: false }));

export interface ApproverFacts {
  readonly mayDecide: boolean;
  readonly ownRefused: boolean;
  readonly named: boolean;
  readonly missing: readonly string[];
  readonly widerVaults: boolean;
}

/** Throws Forbidden naming why the caller may not decide, or returns when they may. */
export function assertApprover(facts: ApproverFacts): void {
  if (!facts.mayDecide) throw new Forbidden('Deciding an approval needs approvals.decide.');
  if (facts.ownRefused) {
    throw new Forbidden('This tool asks for a second person: the member whose message started the Turn cannot decide its calls; another approver must.');
  }
  if (!facts.named) {
    throw new Forbidden("Only the member whose message started this Turn, an owner, an admin or an approver the tool names may decide this call.");
  }
  if (facts.missing.length > 0) {
    throw new Forbidden(`This Turn runs with rights this credential lacks (${facts.missing.join(', ')}): only someone who holds them may decide its calls.`);
  }
  if (facts.widerVaults) throw new Forbidden('This Turn may use Vaults this member may not: only someone who may use them may decide its calls.');
}
