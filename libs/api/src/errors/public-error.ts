import type { ErrorCategory, InputIssue } from '@openbot/domain';

/** A response the boundary decided on: a declared error, or a server fault to record. */
export type PublicError =
  | {
      readonly kind: 'declared';
      readonly status: number;
      readonly body: { readonly type: string; readonly message: string; readonly issues?: readonly InputIssue[] };
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'fault'; readonly status: 500 | 503 | 504; readonly category: ErrorCategory; readonly cause: unknown };

export function declared(
  status: number,
  type: string,
  message: string,
  extra: { issues?: readonly InputIssue[]; headers?: Record<string, string> } = {},
): PublicError {
  return {
    kind: 'declared',
    status,
    body: { type, message, ...(extra.issues ? { issues: extra.issues } : {}) },
    ...(extra.headers ? { headers: extra.headers } : {}),
  };
}
