import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CommandBus } from '@nestjs/cqrs';
import { can, DomainFailure, Forbidden, RateLimited, ROLE_PERMISSIONS, Unauthenticated, type Caller, type MemberCaller, type Permission } from '@openbot/domain';
import { AuthenticateSession } from '@openbot/features';
import { AuthenticateBearer, CountFailedAuthentication } from '@openbot/platform';
import { ACCESS_KEY, REQUIRES_KEY, type AuthenticatedRequest, type RouteAccess } from './access.decorator';

/** The session cookie SSO sets (libs/features/src/sso). */
export const SESSION_COOKIE = 'openbot_session';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The one access check of every route (IDN-05, IDN-09): authenticates an API key
 * (`Authorization: Bearer`) or a same-origin session cookie — both give the same MemberCaller
 * and enter the same use cases — then checks the route's access level and, on member routes,
 * the permission the route names (role permissions narrowed by the key's scopes). Organization
 * checks happen inside each use case's SQL (IDN-08).
 */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(CommandBus) private readonly commands: CommandBus,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_KEY, targets) ?? 'member';
    if (access === 'public') return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const caller = await this.authenticateLimited(request);
    if (access === 'platform' && caller.kind !== 'platform-admin') {
      throw new Forbidden('This route needs the platform administrator token.');
    }
    if (access === 'member') {
      if (caller.kind !== 'member') throw new Forbidden('The platform administrator token cannot act inside an organization; use an API key.');
      const required = this.reflector.get<Permission | undefined>(REQUIRES_KEY, context.getHandler());
      // A member route that names no permission is a programming error, never an open door.
      if (required === undefined) throw new Error(`route ${request.method} ${request.url} names no permission`);
      if (!can(caller, required)) throw new Forbidden(missingPermissionMessage(caller, required));
    }
    request.caller = caller;
    return true;
  }

  /**
   * Failed authentications are limited across nodes (docs/decisions/017, 073), per client address
   * and per API key ID. Neither counter ever refuses a valid credential: the credential is checked
   * first, so clients that share an address cannot lock each other out, and nobody who knows a
   * key's ID can lock its holder out. Each 401 is counted under both, and a failure past either
   * limit answers 429 instead.
   */
  private async authenticateLimited(request: AuthenticatedRequest): Promise<Caller> {
    const bearer = bearerSecretOf(request.headers.authorization);
    try {
      return await this.authenticate(request, bearer);
    } catch (error) {
      if (error instanceof DomainFailure && error.kind === 'unauthenticated') {
        // Only a refusal replaces the 401: a count that cannot be saved (database down) does not.
        await this.commands.execute(new CountFailedAuthentication(request.ip, bearer)).catch((countError: unknown) => {
          if (countError instanceof RateLimited) throw countError;
        });
      }
      throw error;
    }
  }

  private async authenticate(request: AuthenticatedRequest, bearer: string | null): Promise<Caller> {
    if (request.headers.authorization !== undefined) {
      if (bearer === null) throw new Unauthenticated('Send an API key as "Authorization: Bearer <secret>".');
      return this.commands.execute(new AuthenticateBearer(bearer));
    }
    const session = sessionCookie(request.headers.cookie);
    if (session !== null) {
      const csrf = request.headers['x-csrf-token'];
      return this.commands.execute(new AuthenticateSession(session, UNSAFE_METHODS.has(request.method), typeof csrf === 'string' ? csrf : null));
    }
    throw new Unauthenticated('Send an API key as "Authorization: Bearer <secret>", or sign in with SSO.');
  }
}

/**
 * Why a member may not do what the route needs: its role lacks the permission, or the role has
 * it and the API key's scopes left it out. Naming the wrong one sends the user to the wrong fix
 * (a new key cannot help a viewer; a new role cannot help a narrowed key).
 */
function missingPermissionMessage(caller: MemberCaller, required: Permission): string {
  if (!ROLE_PERMISSIONS[caller.role].includes(required)) {
    return `This needs the "${required}" permission, which your role ${caller.role} does not have.`;
  }
  // Only a key's scopes narrow a role (a session has its role's rights).
  return `This needs the "${required}" permission, which this API key does not have: its scopes leave it out, although your role ${caller.role} has it.`;
}

/** The secret of an `Authorization: Bearer <secret>` header, or null (absent or malformed). */
function bearerSecretOf(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(authorization);
  return match ? match[1]! : null;
}

/**
 * The session token from a Cookie header, without needing a cookie plugin on the route. A value
 * that is no valid percent-encoding (`%E0`) is a credential that cannot match: Unauthenticated,
 * like any other wrong token, never a server fault.
 */
function sessionCookie(header: string | undefined): string | null {
  if (header === undefined) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      if (value === '') return null;
      try {
        return decodeURIComponent(value);
      } catch {
        throw new Unauthenticated('The session cookie is malformed; sign in with SSO again.');
      }
    }
  }
  return null;
}
