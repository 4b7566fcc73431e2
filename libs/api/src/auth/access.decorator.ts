import { SetMetadata, applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Caller, MemberCaller, Permission, PlatformAdmin } from '@openbot/domain';
import type { FastifyRequest } from 'fastify';

/**
 * Who may call a route: `public` (health, docs), `platform` (admin token), or `member`
 * (an organization API key). Routes without the decorator are `member`: secure by default.
 */
export type RouteAccess = 'public' | 'platform' | 'member';
export const ACCESS_KEY = 'openbot:access';
export const Access = (access: RouteAccess): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_KEY, access);

/**
 * The permission a `member` route needs (roles and key scopes grant permissions; see
 * libs/domain/src/roles.ts). Every member route names one: the guard refuses a member route
 * without it, so no route is reachable by an oversight.
 */
export const REQUIRES_KEY = 'openbot:requires';
export const Requires = (permission: Permission): MethodDecorator =>
  // The OpenAPI document names it too (`x-openbot-permission`), so clients and the role matrix test read it there.
  applyDecorators(SetMetadata(REQUIRES_KEY, permission), ApiExtension('x-openbot-permission', permission));

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
