import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { Forbidden, Unauthenticated } from '@openbot/domain';
import { AuthenticateBearer } from '@openbot/openbot';
import { ACCESS_KEY, type AuthenticatedRequest, type RouteAccess } from './access.decorator';

/** Authenticates `Authorization: Bearer <secret>` and checks the route's access level. */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access =
      this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_KEY, [context.getHandler(), context.getClass()]) ??
      'member';
    if (access === 'public') return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const match = /^Bearer ([^\s]+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new Unauthenticated('Send an API key as "Authorization: Bearer <secret>".');
    const caller = await this.commands.execute(new AuthenticateBearer(match[1]!));
    if (access === 'platform' && caller.kind !== 'platform-admin') {
      throw new Forbidden('This route needs the platform administrator token.');
    }
    if (access === 'member' && caller.kind !== 'member') {
      throw new Forbidden('The platform administrator token cannot act inside an organization; use an API key.');
    }
    request.caller = caller;
    return true;
  }
}
