import { Conflict, InvalidInput, NotFound, Unauthenticated, Unavailable } from '@openbot/domain';

export const registrationNotFound = (): NotFound => new NotFound('OAuthRegistration');

/** 409: the App's server cannot be authorized as it is (no PKCE S256, another issuer, no registration possible, ...), with the reason. */
export class AppAuthorizationRefused extends Conflict {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super('AppAuthorizationRefused', `The App's server cannot be authorized: ${message} (${reason}).`);
  }
}

/** 503: discovery or registration did not finish (the server could not be reached). */
export class AppAuthorizationUnavailable extends Unavailable {
  constructor() {
    super('The App’s authorization server could not be reached; try again later.');
  }
}

/** 400 on `state`: unknown, used, expired, or issued for another registration (the mix-up defence). */
export const refusedState = (message: string): InvalidInput => new InvalidInput([{ path: 'state', message }]);

/** 401: the authorization response names another issuer than the registration's, or none when the server advertises it (RFC 9207). */
export const refusedIssuer = (): Unauthenticated => new Unauthenticated('The authorization response does not come from this registration’s issuer.');
