import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { BudgetExceededBody, DeclaredErrorBody, InvalidInputBody, LimitReachedBody, ModelNotPricedBody, OrganizationRateLimitedBody, RequestFailedBody } from './error-bodies';

/** The 429 answer with its `Retry-After` header; `why` says what is limited on this route. */
export function ApiRateLimited(why: string): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status: 429,
    description: `RateLimited: ${why}; retry after the \`Retry-After\` seconds`,
    type: DeclaredErrorBody,
    headers: { 'Retry-After': { description: 'Whole seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } } },
  });
}

/** 409 LimitReached: the organization holds as much as `limit` allows (decision 076). */
export function ApiLimitReached(limit: string): MethodDecorator & ClassDecorator {
  return ApiResponse({ status: 409, description: `LimitReached: the organization's \`${limit}\` limit (GET /v1/limits) has no room left`, type: LimitReachedBody });
}

/** 429 of a route an organization limit can refuse (decision 076); `why` names them and the other limits of the route. */
export function ApiOrganizationRateLimited(why: string): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status: 429,
    description: `RateLimited: ${why}; the body's \`limit\` names an organization limit; retry after the \`Retry-After\` seconds`,
    type: OrganizationRateLimitedBody,
    headers: { 'Retry-After': { description: 'Whole seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } } },
  });
}

/** Why any authenticating route can answer 429 (the guard limits failed authentications, docs/decisions/017, 073). */
const FAILED_AUTH_LIMIT = 'too many failed authentications with this API key ID or from this client address (a valid credential still gets in)';

/**
 * Documents the error answers a route can give, with their shapes (docs/http-api.md "Errors"). A route
 * that can answer 401 can also answer 429: failed authentications are limited per client address and per API key ID.
 */
export function ApiErrors(...statuses: Array<400 | 401 | 402 | 403 | 404 | 409 | 429>): MethodDecorator & ClassDecorator {
  const descriptions: Record<number, string> = {
    400: 'InvalidInput: the offending fields are listed in `issues`',
    401: 'Unauthenticated: missing, unknown, expired or revoked credential',
    402:
      'BudgetExceeded: a budget (`budgetId`) or the credits (`budgetId` null) have nothing left; ' +
      'ModelNotPriced: the organization spends platform credits and its model (`model`) has no platform price',
    403: 'Forbidden: this credential may not use this route',
    404: '`<Resource>NotFound`: unknown, malformed, or another organization’s ID',
    409: 'A conflict with the current state',
  };
  const limited = statuses.includes(429) || statuses.includes(401);
  return applyDecorators(
    ...statuses
      .filter((status) => status !== 429)
      .map((status) =>
        status === 402
          ? applyDecorators(
              ApiExtraModels(BudgetExceededBody, ModelNotPricedBody),
              ApiResponse({ status, description: descriptions[status], schema: { oneOf: [{ $ref: getSchemaPath(BudgetExceededBody) }, { $ref: getSchemaPath(ModelNotPricedBody) }] } }),
            )
          : ApiResponse({ status, description: descriptions[status], type: status === 400 ? InvalidInputBody : DeclaredErrorBody }),
      ),
    ...(limited ? [ApiRateLimited(FAILED_AUTH_LIMIT)] : []),
    ApiResponse({ status: 500, description: 'RequestFailed (category internal); see the openbot-error-id header', type: RequestFailedBody }),
    ApiResponse({ status: 503, description: 'RequestFailed (category unavailable): a dependency is down', type: RequestFailedBody }),
  );
}
