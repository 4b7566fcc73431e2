import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Caller, MemberCaller, PlatformAdmin } from '@openbot/domain';
import type { FastifyRequest } from 'fastify';

/**
 * Who may call a route: `public` (health, docs), `platform` (admin token), or `member`
 * (an organization API key). Routes without the decorator are `member`: secure by default.
 */
export type RouteAccess = 'public' | 'platform' | 'member';
export const ACCESS_KEY = 'openbot:access';
export const Access = (access: RouteAccess): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_KEY, access);

export interface AuthenticatedRequest extends FastifyRequest {
  caller?: Caller;
}

function callerOf(context: ExecutionContext): Caller {
  const caller = context.switchToHttp().getRequest<AuthenticatedRequest>().caller;
  if (caller === undefined) throw new Error('caller decorator used on a route without authentication');
  return caller;
}

/** The calling member of a `member` route (set by BearerGuard). */
export const CurrentMember = createParamDecorator((_: unknown, context: ExecutionContext): MemberCaller => {
  const caller = callerOf(context);
  if (caller.kind !== 'member') throw new Error('CurrentMember used on a route that is not a member route');
  return caller;
});

/** The platform administrator of a `platform` route (set by BearerGuard). */
export const CurrentAdmin = createParamDecorator((_: unknown, context: ExecutionContext): PlatformAdmin => {
  const caller = callerOf(context);
  if (caller.kind !== 'platform-admin') throw new Error('CurrentAdmin used on a route that is not a platform route');
  return caller;
});
