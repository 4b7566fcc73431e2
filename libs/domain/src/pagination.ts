import { InvalidInput } from './failures';
import { isUuid } from './ids';

/** Cursor pagination as docs/http-api.md fixes it: `?after=&limit=` answering `{ data, next }`. */
export interface PageRequest {
  /** Exclusive lower bound: the `next` value of the previous page. */
  readonly after: string | null;
  readonly limit: number;
}

export interface Page<T> {
  readonly data: readonly T[];
  readonly next: string | null;
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

/**
 * Parses raw query values. Cursors are the UUIDv7 of the last row, so pages are stable
 * under concurrent inserts and the order is creation order (oldest first unless a list says
 * otherwise).
 */
export function parsePageRequest(after: unknown, limit: unknown): PageRequest {
  const issues = [];
  let parsedLimit = DEFAULT_PAGE_LIMIT;
  if (limit !== undefined && limit !== '') {
    const n = typeof limit === 'string' && /^\d+$/.test(limit) ? Number(limit) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_LIMIT) {
      issues.push({ path: 'limit', message: `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}` });
    } else {
      parsedLimit = n;
    }
  }
  let parsedAfter: string | null = null;
  if (after !== undefined && after !== '') {
    if (typeof after !== 'string' || !isUuid(after)) {
      issues.push({ path: 'after', message: 'after must be a cursor returned as next' });
    } else {
      parsedAfter = after.toLowerCase();
    }
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  return { after: parsedAfter, limit: parsedLimit };
}

/**
 * Builds a page from `limit + 1` fetched rows: the extra row only says a next page exists. The
 * order is the query's: `next` is the last ID of the page either way, so a newest-first list
 * (approvals: `ORDER BY id DESC`, continued with `id < after`) uses the same helper.
 */
export function toPage<T extends { readonly id: string }>(rows: readonly T[], limit: number): Page<T> {
  const data = rows.slice(0, limit);
  const next = rows.length > limit && data.length > 0 ? data[data.length - 1]!.id : null;
  return { data, next };
}

/** The order of a list that offers both: by creation, oldest first (`asc`) or newest first (`desc`). */
export const LIST_ORDERS = ['asc', 'desc'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

/** Parses `?order=`; absent or empty is `fallback` (the list's order before `order` existed). */
export function parseListOrder(order: unknown, fallback: ListOrder): ListOrder {
  if (order === undefined || order === '') return fallback;
  if (typeof order === 'string' && (LIST_ORDERS as readonly string[]).includes(order)) return order as ListOrder;
  throw new InvalidInput([{ path: 'order', message: `order must be one of ${LIST_ORDERS.join(', ')}` }]);
}

/**
 * A query parameter a list does not know is refused, never ignored: a misspelled or unsupported
 * filter would otherwise answer the unfiltered list as if it had applied.
 */
export function rejectUnknownQueryParameters(query: Readonly<Record<string, unknown>>, known: readonly string[]): void {
  const unknown = Object.keys(query).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new InvalidInput(unknown.map((name) => ({ path: name, message: `${name} is not a parameter of this list; it takes ${known.join(', ')}` })));
  }
}
