import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Unavailable } from '@openbot/domain';
import { StartupGate } from '@openbot/platform';
import { ACCESS_KEY, type RouteAccess } from './access.decorator';

/** While migrations are pending, only public routes (health, docs) answer (MIG-02). */
@Injectable()
export class StartupGateGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(StartupGate) private readonly gate: StartupGate,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_KEY, [context.getHandler(), context.getClass()]);
    if (access === 'public' || this.gate.isOpen) return true;
    throw new Unavailable('This node is waiting for database migrations.');
  }
}
