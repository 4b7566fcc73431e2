/** Billing as the API shows it. Money is integer micros; amounts stay below 2^53 (PLAT-08). */

/**
 * Who set a price version (decision 072): the organization (`PUT /v1/prices/{model}`), the
 * platform administrator, or the operator's default price (`OPENBOT_DEFAULT_PRICE`), written as a
 * version when it first priced a call. Once an organization has credits only the platform's and
 * the default's versions price its calls.
 */
export const PRICE_SETTERS = ['organization', 'platform', 'default'] as const;
export type PriceSetter = (typeof PRICE_SETTERS)[number];

export interface PriceView {
  readonly id: string;
  readonly model: string;
  readonly inputPerMillionMicros: number;
  readonly outputPerMillionMicros: number;
  readonly cachedInputPerMillionMicros: number;
  readonly effectiveFrom: Date;
  /** Who set it (decision 072): under credits only `platform` and `default` versions price calls. */
  readonly setBy: PriceSetter;
  readonly createdAt: Date;
}

export const PRICE_VIEW_COLUMNS = `id, model, input_per_million_micros::float8 AS "inputPerMillionMicros",
  output_per_million_micros::float8 AS "outputPerMillionMicros", cached_input_per_million_micros::float8 AS "cachedInputPerMillionMicros",
  effective_from AS "effectiveFrom", set_by AS "setBy", created_at AS "createdAt"`;

export const CREDIT_ENTRY_KINDS = ['grant', 'charge', 'adjustment'] as const;
export type CreditEntryKind = (typeof CREDIT_ENTRY_KINDS)[number];

export interface CreditEntryView {
  readonly id: string;
  readonly amountMicros: number;
  readonly kind: CreditEntryKind;
  readonly reason: string;
  readonly usageRecordId: string | null;
  readonly createdAt: Date;
}

export const CREDIT_ENTRY_COLUMNS = `id, amount_micros::float8 AS "amountMicros", kind, reason, usage_record_id AS "usageRecordId", created_at AS "createdAt"`;

export const BUDGET_SCOPE_KINDS = ['organization', 'bot', 'member'] as const;
export type BudgetScopeKind = (typeof BUDGET_SCOPE_KINDS)[number];
export const BUDGET_PERIODS = ['day', 'month', 'total'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface BudgetView {
  readonly id: string;
  readonly scope: { readonly kind: BudgetScopeKind; readonly id: string | null };
  readonly period: BudgetPeriod;
  readonly limitMicros: number | null;
  readonly limitTokens: number | null;
  /** In the current period; the money pair for a money budget, the token pair for a quota, else null. */
  readonly spentMicros: number | null;
  readonly reservedMicros: number | null;
  readonly spentTokens: number | null;
  readonly reservedTokens: number | null;
  readonly createdAt: Date;
}

export interface RateLimitView {
  readonly id: string;
  readonly scope: { readonly kind: BudgetScopeKind; readonly id: string | null };
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: number | null;
  readonly createdAt: Date;
}

export const RATE_LIMIT_VIEW_COLUMNS = `id, json_build_object('kind', scope_kind, 'id', scope_id) AS scope, requests_per_minute AS "requestsPerMinute",
  tokens_per_minute AS "tokensPerMinute", created_at AS "createdAt"`;
