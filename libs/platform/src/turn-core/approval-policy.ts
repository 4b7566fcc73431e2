import type { ApprovalPolicy } from './tool-spec';

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
