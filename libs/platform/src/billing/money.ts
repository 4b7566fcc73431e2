import type { InputIssue } from '@openbot/domain';

/**
 * Money and token amounts on input (PLAT-08): JSON integers of at most 2^53 − 1, never
 * fractional; `min` says whether zero (prices) or only positive amounts (limits) are allowed, and
 * `signed` lets negative amounts through (credit adjustments). Each refusal names its field.
 */
export function amountIssue(value: unknown, path: string, rule: { readonly min: 0 | 1; readonly signed?: boolean }): InputIssue | null {
  if (typeof value !== 'number' || !Number.isInteger(value)) return { path, message: `${path} must be an integer` };
  if (!Number.isSafeInteger(value)) return { path, message: `${path} must be at most 2^53 − 1 in size` };
  if (rule.signed === true) return value === 0 ? { path, message: `${path} must not be 0` } : null;
  if (value < rule.min) return { path, message: rule.min === 0 ? `${path} must not be negative` : `${path} must be at least 1` };
  return null;
}
