import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@openbot/domain';

/** The `after` and `limit` query parameters every list route takes (docs/http-api.md). */
export function ApiPageQuery(): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'after', required: false, description: 'The `next` value of the previous page' }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
    }),
  );
}
