import { ERROR_CATEGORIES, type ErrorCategory } from '@openbot/domain';
import type { Json } from './json';

/** How deep a failure's `cause` chain is searched for what it names about itself. */
const CAUSE_DEPTH = 5;

function* causes(error: unknown): Generator<object> {
  for (let at = error, depth = 0; at !== null && typeof at === 'object' && depth < CAUSE_DEPTH; at = (at as { cause?: unknown }).cause, depth++) yield at;
}

/**
 * The category a failure names for itself (`failureCategory`, on it or a cause), e.g. `forbidden`
 * for a refused Vault reference (SEC-02) or `invalid-request` for a model provider's refusal;
 * null when none names one (the caller's default is `internal`).
 */
export function namedCategory(error: unknown): ErrorCategory | null {
  for (const at of causes(error)) {
    const named = (at as { failureCategory?: unknown }).failureCategory;
    if ((ERROR_CATEGORIES as readonly unknown[]).includes(named)) return named as ErrorCategory;
  }
  return null;
}

/**
 * The safe detail a failure names for itself (`failureDetail`, on it or a cause): a small JSON
 * object its maker scrubbed already, e.g. what a model provider answered (decision 082). It is
 * shown with the category; null when none names one. Only a plain object is taken.
 */
export function namedDetail(error: unknown): { readonly [key: string]: Json } | null {
  for (const at of causes(error)) {
    const detail = (at as { failureDetail?: unknown }).failureDetail;
    if (detail !== null && typeof detail === 'object' && !Array.isArray(detail)) return detail as { readonly [key: string]: Json };
  }
  return null;
}
