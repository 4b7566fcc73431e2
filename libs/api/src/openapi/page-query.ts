import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { DEFAULT_PAGE_LIMIT, LIST_ORDERS, MAX_PAGE_LIMIT, type ListOrder } from '@openbot/domain';

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

/** The `order` query parameter of a list that can be read either way; `fallback` is its default. */
export function ApiOrderQuery(fallback: ListOrder): MethodDecorator {
  return ApiQuery({
    name: 'order',
    required: false,
    description: 'By creation: `asc` oldest first, `desc` newest first. `next` continues in the same order; send the same `order` with `after`.',
    schema: { type: 'string', enum: [...LIST_ORDERS], default: fallback },
  });
}
