import { HttpException } from '@nestjs/common';
import { BudgetExceeded, Conflict, DomainFailure, InvalidInput, isConnectionFailure, LimitReached, ModelNotPriced, RateLimited } from '@openbot/domain';
import { declared, type PublicError } from './public-error';

/**
 * Maps anything thrown while serving a request to its public form (ERR-02): domain failures
 * to their declared status, framework input errors (body, content type, size) to declared
 * 4xx errors, and everything else to a server fault. Pure: no I/O, no logging.
 */
export function classifyError(error: unknown): PublicError {
  if (error instanceof DomainFailure) return fromDomain(error);
  if (error instanceof HttpException) return fromHttpException(error);
  const framework = fromFramework(error);
  if (framework) return framework;
  if (isConnectionFailure(error)) return { kind: 'fault', status: 503, category: 'unavailable', cause: error };
  return { kind: 'fault', status: 500, category: 'internal', cause: error };
}

function fromDomain(failure: DomainFailure): PublicError {
  switch (failure.kind) {
    case 'invalid-input':
      return declared(400, failure.type, failure.message, { issues: failure instanceof InvalidInput ? failure.issues : [] });
    case 'unauthenticated':
      return declared(401, failure.type, failure.message, { headers: { 'www-authenticate': 'Bearer' } });
    case 'forbidden':
      return declared(403, failure.type, failure.message);
    case 'not-found':
      return declared(404, failure.type, failure.message);
    case 'conflict':
      return declared(409, failure.type, failure.message, { fields: failure instanceof Conflict ? { ...failure.fields } : {} });
    case 'budget-exceeded':
      return declared(402, failure.type, failure.message, { fields: { budgetId: failure instanceof BudgetExceeded ? failure.budgetId : null } });
    case 'model-not-priced':
      return declared(402, failure.type, failure.message, { fields: { model: failure instanceof ModelNotPriced ? failure.model : null } });
    case 'limit-reached':
      return declared(409, failure.type, failure.message, {
        fields: failure instanceof LimitReached ? { limit: failure.limit, value: failure.value } : {},
      });
    case 'rate-limited': {
      const seconds = failure instanceof RateLimited ? failure.retryAfterSeconds : 1;
      // An organization limit is named in the body (decision 076); the other rate limits keep their body.
      const limit = failure instanceof RateLimited && failure.limit !== null ? { fields: { limit: failure.limit } } : {};
      return declared(429, failure.type, failure.message, { headers: { 'retry-after': String(Math.ceil(seconds)) }, ...limit });
    }
    case 'unavailable':
      return { kind: 'fault', status: 503, category: 'unavailable', cause: failure };
    default: {
      const unreachable: never = failure.kind;
      return { kind: 'fault', status: 500, category: 'internal', cause: unreachable };
    }
  }
}

/** Nest raises these for routing (unknown route) and from its own pipes; their text is ours, not user data. */
function fromHttpException(error: HttpException): PublicError {
  const status = error.getStatus();
  switch (status) {
    case 404:
      return declared(404, 'RouteNotFound', 'No route matches this method and path.');
    case 405:
      return declared(405, 'MethodNotAllowed', 'This route does not accept this method.');
    case 413:
      return declared(413, 'PayloadTooLarge', 'The request body is larger than the server accepts.');
    case 415:
      return declared(415, 'UnsupportedMediaType', 'The request body must be application/json.');
    default:
      if (status >= 400 && status < 500) return declared(status, 'InvalidInput', 'The request is not valid.', { issues: [] });
      return { kind: 'fault', status: 500, category: 'internal', cause: error };
  }
}

/** Fastify's own request errors carry a `FST_` code and a 4xx statusCode. */
function fromFramework(error: unknown): PublicError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return null;
  switch (code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return declared(413, 'PayloadTooLarge', 'The request body is larger than the server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? declared(415, 'UnsupportedMediaType', 'The request body must be application/json.')
        : declared(400, 'InvalidInput', 'The Content-Length header does not match the body.', { issues: [] });
    case 'FST_ERR_BAD_URL':
      // The router could not decode the path (`/v1/bots/%E0`): say which part of the request is wrong.
      return declared(400, 'InvalidInput', 'The request is not valid.', {
        issues: [{ path: 'path', message: 'the URL path holds a malformed percent-encoding' }],
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return declared(400, 'InvalidInput', 'The body is empty but the content type says JSON.', {
        issues: [{ path: '', message: 'body must be a JSON value' }],
      });
    default:
      if (error instanceof SyntaxError || code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return declared(400, 'InvalidInput', 'The body is not valid JSON.', {
          issues: [{ path: '', message: 'body is not valid JSON' }],
        });
      }
      if (typeof code === 'string' && code.startsWith('FST_')) {
        return declared(statusCode, 'InvalidInput', 'The request is not valid.', { issues: [] });
      }
      return null;
  }
}
