import { insufficientScopeOf, type Fetch } from '@openbot/protocol';
import type { ConnectionAuthorization } from '../apps/app-client';
import type { GrantToken, GrantTokens } from './grant-tokens';

/**
 * The Authorization header of a connection's MCP requests, resolved per request from the grant
 * the connection holds (none: the request goes as it is). A token about to expire is refreshed
 * before it is sent; a 401 to a token is answered by one single-flight refresh and one repeat of
 * the request with the new token. A refresh that cannot help leaves the 401 as it was: the call
 * fails `needs_authorization`, and the grant's state says why. A 403 `insufficient_scope` records the
 * scope it asks for on the grant: the next authorization asks for the union (scope step-up).
 */
export class ConnectionBearer implements ConnectionAuthorization {
  constructor(private readonly grants: GrantTokens) {}

  fetchFor(connectionId: string, fetch: Fetch): Fetch {
    return async (input, init) => {
      let token = await this.grants.current(connectionId);
      if (token === null) return fetch(input, init);
      if (this.grants.expiring(token)) token = await this.grants.refreshed(token).catch(() => token!);
      const response = await fetch(input, withBearer(init, token));
      const stepUp = insufficientScopeOf(response);
      // Scope step-up: remembered for the next authorization, never a silent one (the 403 is the call's answer).
      if (stepUp !== null) await this.grants.stepUp(token, stepUp);
      if (response.status !== 401) return response;
      let fresh: GrantToken;
      try {
        fresh = await this.grants.refreshed(token);
      } catch {
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      return fetch(input, withBearer(init, fresh));
    };
  }
}

function withBearer(init: RequestInit | undefined, token: GrantToken): RequestInit {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token.accessToken}`);
  return { ...init, headers };
}
