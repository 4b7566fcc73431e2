import type { InputIssue } from '@openbot/domain';

/**
 * When a tool call needs a person's yes (decision 025): `never` (the default), `always`, or a rule
 * on the call's arguments — approval when the value at the dotted `argument` path is one of `in`.
 */
export type ApprovalRule = { readonly argument: string; readonly in: readonly unknown[] };
export type ApprovalPolicy = 'never' | 'always' | ApprovalRule;

/** Longest time a pending approval may wait before it expires: 30 days. */
export const MAX_APPROVAL_EXPIRY_SECONDS = 2_592_000;

/**
 * Whether a call with these raw arguments (the model's JSON text) needs approval. Values compare
 * as JSON values; an absent path does not match; arguments that are not a JSON object always need
 * approval, so a malformed call can never slip past a rule.
 */
export function needsApproval(policy: ApprovalPolicy | undefined, rawArguments: string): boolean {
  if (policy === undefined || policy === 'never') return false;
  if (policy === 'always') return true;
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch {
    return true;
  }
  if (!isObject(args)) return true;
  let value: unknown = args;
  for (const key of policy.argument.split('.')) {
    if (!isObject(value) || !Object.hasOwn(value, key)) return false;
    value = value[key];
  }
  const seen = canonical(value);
  return policy.in.some((candidate) => canonical(candidate) === seen);
}

/** The issues of each tool's `approval` and `approvalExpiresInSeconds` (`tools.<n>.approval`). */
export function approvalIssues(tools: ReadonlyArray<{ readonly approval?: unknown; readonly approvalExpiresInSeconds?: unknown }>): InputIssue[] {
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
  });
  return issues;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON text with sorted keys: two values compare equal when they are the same JSON value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
