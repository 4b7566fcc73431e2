import { applyDecorators, Inject, Injectable, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { CountSsoLogin } from '@openbot/platform';
import type { FastifyRequest } from 'fastify';
import { ApiRateLimited } from '../errors/api-errors.decorator';

/**
 * Counts the start of a login per client address before its handler runs, across nodes
 * (docs/decisions/017): past `OPENBOT_SSO_LOGIN_LIMIT` per window the answer is 429 RateLimited.
 */
@Injectable()
export class SsoLoginLimitGuard implements CanActivate {
  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    await this.commands.execute(new CountSsoLogin(context.switchToHttp().getRequest<FastifyRequest>().ip));
    return true;
  }
}

/** The public login route's rate limit and its 429 in the OpenAPI document. */
export const LimitSsoLogins = (): MethodDecorator & ClassDecorator =>
  applyDecorators(UseGuards(SsoLoginLimitGuard), ApiRateLimited('too many sign-ins started from this client address'));
