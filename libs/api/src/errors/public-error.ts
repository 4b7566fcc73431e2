import type { ErrorCategory, InputIssue } from '@openbot/domain';

/** A response the boundary decided on: a declared error, or a server fault to record. */
export type PublicError =
  | {
      readonly kind: 'declared';
      readonly status: number;
      readonly body: { readonly type: string; readonly message: string; readonly issues?: readonly InputIssue[]; readonly [field: string]: unknown };
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'fault'; readonly status: 500 | 503 | 504; readonly category: ErrorCategory; readonly cause: unknown };

export function declared(
  status: number,
  type: string,
  message: string,
  extra: { issues?: readonly InputIssue[]; headers?: Record<string, string>; fields?: Record<string, unknown> } = {},
): PublicError {
  return {
    kind: 'declared',
    status,
    // Declared extra fields (a 402's `budgetId`) never replace the type and message.
    body: { ...extra.fields, type, message, ...(extra.issues ? { issues: extra.issues } : {}) },
    ...(extra.headers ? { headers: extra.headers } : {}),
  };
}
