/**
 * Typed domain failures. Business code throws these; only the HTTP boundary in libs/api
 * maps them to status codes and public bodies (ARCH-03, ERR-02).
 */
export type FailureKind =
  | 'invalid-input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'budget-exceeded'
  | 'model-not-priced'
  | 'limit-reached'
  | 'rate-limited'
  | 'unavailable';

export interface InputIssue {
  /** Dotted path of the offending field, e.g. `tools.0.name`; empty for the whole body. */
  readonly path: string;
  readonly message: string;
}

export abstract class DomainFailure extends Error {
  abstract readonly kind: FailureKind;
  /** Stable public type name, e.g. `OrganizationNotFound`. */
  abstract readonly type: string;
}

export class InvalidInput extends DomainFailure {
  readonly kind = 'invalid-input';
  readonly type = 'InvalidInput';
  constructor(
    readonly issues: readonly InputIssue[],
    message = 'The request is not valid.',
  ) {
    super(message);
  }
}

export class Unauthenticated extends DomainFailure {
  readonly kind = 'unauthenticated';
  readonly type = 'Unauthenticated';
  constructor(message = 'A valid API key is required.') {
    super(message);
  }
}

export class Forbidden extends DomainFailure {
  readonly kind = 'forbidden';
  readonly type = 'Forbidden';
  constructor(message = 'This credential may not perform this action.') {
    super(message);
  }
}

/** `<Resource>NotFound`; also used for malformed IDs and other organizations' resources. */
export class NotFound extends DomainFailure {
  readonly kind = 'not-found';
  readonly type: string;
  constructor(readonly resource: string) {
    super(`${resource} not found.`);
    this.type = `${resource}NotFound`;
  }
}

/** A 409; `fields` are extra public fields of the body (e.g. the existing resource's `appId`), never secrets. */
export class Conflict extends DomainFailure {
  readonly kind = 'conflict';
  constructor(
    readonly type: string,
    message: string,
    readonly fields: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

/**
 * Work could not start because a budget or the credits have nothing left (PLAT-08):
 * limit − spent − reserved ≤ 0. `budgetId` names the budget, null for the credits.
 */
export class BudgetExceeded extends DomainFailure {
  readonly kind = 'budget-exceeded';
  readonly type = 'BudgetExceeded';
  constructor(readonly budgetId: string | null) {
    super(budgetId === null ? 'The organization has no credits left.' : 'A budget has nothing left for this period.');
  }
}

/**
 * Work could not start because the organization spends platform credits and its model has no
 * price the platform set, and the operator set no default price (decision 072): `model` names it.
 */
export class ModelNotPriced extends DomainFailure {
  readonly kind = 'model-not-priced';
  readonly type = 'ModelNotPriced';
  constructor(readonly model: string) {
    super(`The organization spends platform credits and the model ${model} has no platform price: the platform administrator must price it first.`);
  }
}

/** The per-organization limits (decision 076), by the names `GET /v1/limits` shows. */
export type OrganizationLimitName = 'apiKeys' | 'streams' | 'queuedTurnsPerChat' | 'toolCallsPerStep' | 'runningTurns' | 'fileBytes' | 'memoryItems';

export class RateLimited extends DomainFailure {
  readonly kind = 'rate-limited';
  readonly type = 'RateLimited';
  constructor(
    readonly retryAfterSeconds: number,
    message = 'Too many requests.',
    /** The organization limit that refused (decision 076); absent for the other rate limits. */
    readonly limit: OrganizationLimitName | null = null,
  ) {
    super(message);
  }
}

/**
 * The organization holds as much as its limit allows (decision 076): API keys, stored file bytes,
 * memory items. Nothing frees by waiting; the caller deletes something or asks the operator.
 */
export class LimitReached extends DomainFailure {
  readonly kind = 'limit-reached';
  readonly type = 'LimitReached';
  constructor(
    readonly limit: OrganizationLimitName,
    readonly value: number,
    message: string,
  ) {
    super(message);
  }
}

/** A dependency the request needs is not available (database down, startup gate closed). */
export class Unavailable extends DomainFailure {
  readonly kind = 'unavailable';
  readonly type = 'RequestFailed';
  constructor(message = 'A required service is unavailable.') {
    super(message);
  }
}
