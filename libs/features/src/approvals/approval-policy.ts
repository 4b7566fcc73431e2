import { isUuid, MEMBER_ROLES, ROLE_PERMISSIONS, type InputIssue, type MemberRole } from '@openbot/domain';

export type { ApprovalPolicy, ApprovalRule, ApproverPolicy } from '../../../platform/src/turn-core/tool-spec';
export { needsApproval } from '../../../platform/src/turn-core/approval-policy';
import type { ApprovalRule } from '../../../platform/src/turn-core/tool-spec';

/** The most members one tool's `approvers` may name. */
export const MAX_NAMED_APPROVERS = 100;

/** Roles that can ever decide: those whose permissions include `approvals.decide`. */
export const APPROVER_ROLES: readonly MemberRole[] = MEMBER_ROLES.filter((role) => ROLE_PERMISSIONS[role].includes('approvals.decide'));

/** Longest time a pending approval may wait before it expires: 30 days. */
export const MAX_APPROVAL_EXPIRY_SECONDS = 2_592_000;

/** The issues of each tool's `approval`, `approvalExpiresInSeconds` and `approvers` (`tools.<n>.approval`). */
export function approvalIssues(
  tools: ReadonlyArray<{ readonly approval?: unknown; readonly approvalExpiresInSeconds?: unknown; readonly approvers?: unknown }>,
): InputIssue[] {
  const issues: InputIssue[] = [];
  tools.forEach((tool, index) => {
    const policy = tool.approval;
    if (policy !== undefined && policy !== 'never' && policy !== 'always') {
      const rule = policy as Partial<ApprovalRule> | null;
      const valid =
        isObject(rule) &&
        Object.keys(rule).every((key) => key === 'argument' || key === 'in') &&
        typeof rule.argument === 'string' &&
        /^[^.]+(\.[^.]+)*$/.test(rule.argument) &&
        rule.argument.length <= 256 &&
        Array.isArray(rule.in) &&
        rule.in.length >= 1 &&
        rule.in.length <= 100;
      if (!valid) {
        issues.push({ path: `tools.${index}.approval`, message: 'approval must be "never", "always" or { "argument": "<dotted path>", "in": [1 to 100 values] }' });
      }
    }
    const expiry = tool.approvalExpiresInSeconds;
    if (expiry !== undefined && !(Number.isInteger(expiry) && (expiry as number) >= 1 && (expiry as number) <= MAX_APPROVAL_EXPIRY_SECONDS)) {
      issues.push({ path: `tools.${index}.approvalExpiresInSeconds`, message: `approvalExpiresInSeconds must be an integer from 1 to ${MAX_APPROVAL_EXPIRY_SECONDS}` });
    }
    if (tool.approvers !== undefined) issues.push(...approverIssues(tool.approvers, `tools.${index}.approvers`));
  });
  return issues;
}

/** The shape of one tool's `approvers`; whether its members exist is checked against the database (approver-members.ts). */
function approverIssues(approvers: unknown, path: string): InputIssue[] {
  if (!isObject(approvers) || !Object.keys(approvers).every((key) => key === 'roles' || key === 'members' || key === 'secondPerson')) {
    return [{ path, message: 'approvers must be { "roles"?: [...], "members"?: [member IDs], "secondPerson"?: true|false }' }];
  }
  const issues: InputIssue[] = [];
  const { roles, members, secondPerson } = approvers;
  if (roles !== undefined) {
    if (!Array.isArray(roles) || roles.length > APPROVER_ROLES.length) issues.push({ path: `${path}.roles`, message: `roles must be a list of ${APPROVER_ROLES.join(', ')}` });
    else {
      roles.forEach((role, i) => {
        if (!(APPROVER_ROLES as readonly unknown[]).includes(role)) {
          issues.push({ path: `${path}.roles.${i}`, message: `a role that may decide approvals: one of ${APPROVER_ROLES.join(', ')}` });
        }
      });
    }
  }
  if (members !== undefined) {
    if (!Array.isArray(members) || members.length > MAX_NAMED_APPROVERS) issues.push({ path: `${path}.members`, message: `members must be a list of at most ${MAX_NAMED_APPROVERS} member IDs` });
    else {
      members.forEach((member, i) => {
        if (typeof member !== 'string' || !isUuid(member)) issues.push({ path: `${path}.members.${i}`, message: 'a member ID of this organization' });
        else if (members.indexOf(member) !== i) issues.push({ path: `${path}.members.${i}`, message: 'this member is named more than once' });
      });
    }
  }
  if (secondPerson !== undefined && typeof secondPerson !== 'boolean') issues.push({ path: `${path}.secondPerson`, message: 'secondPerson must be true or false' });
  return issues;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
