import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { DeclaredErrorBody, InvalidInputBody, RequestFailedBody } from './error-bodies';

/** Documents the error answers a route can give, with their shapes (docs/http-api.md "Errors"). */
export function ApiErrors(...statuses: Array<400 | 401 | 403 | 404 | 409 | 429>): MethodDecorator & ClassDecorator {
  const descriptions: Record<number, string> = {
    400: 'InvalidInput: the offending fields are listed in `issues`',
    401: 'Unauthenticated: missing, unknown, expired or revoked credential',
    403: 'Forbidden: this credential may not use this route',
    404: '`<Resource>NotFound`: unknown, malformed, or another organization’s ID',
    409: 'A conflict with the current state',
    429: 'RateLimited: retry after the `Retry-After` seconds',
  };
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: descriptions[status], type: status === 400 ? InvalidInputBody : DeclaredErrorBody }),
    ),
    ApiResponse({ status: 500, description: 'RequestFailed (category internal); see the openbot-error-id header', type: RequestFailedBody }),
    ApiResponse({ status: 503, description: 'RequestFailed (category unavailable): a dependency is down', type: RequestFailedBody }),
  );
}
