import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, NotFound, type MemberCaller, type SealedRecordId } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { AUTHORIZATION_LIFETIME_MS } from '../authorization-request';
import { bindingCookieName, bindingHash, lockOwnRequest } from '../authorization-binding';
import { callbackPath, SEALED } from '../oauth-records';
import { randomBytes } from 'node:crypto';

/** What the start URL does in the browser: set the binding cookie, then go to the authorization server. */
export interface StartedInBrowser {
  readonly location: string;
  readonly cookie: { readonly name: string; readonly value: string; readonly path: string; readonly maxAgeSeconds: number };
}

export const authorizationNotFound = (): NotFound => new NotFound('AppAuthorization');

/**
 * `GET /v1/oauth/authorizations/{id}/start` (decision 066): the browser leg of an App sign-in
 * begins on OpenBot, in the signed-in browser of the member who asked. Another organization's
 * request is 404; another member's, or a caller that is not a browser session (an API key), is
 * 403. The request is bound to this browser: a fresh binding cookie (HttpOnly, SameSite=Lax, its
 * Path the registration's callback), whose hash the callback requires; then the browser goes to
 * the authorization server. Opening it again in another browser of the same member binds that one.
 */
export class StartAuthorization extends Command<StartedInBrowser> {
  constructor(
    readonly caller: MemberCaller,
    readonly authorizationId: string,
  ) {
    super();
  }
}

@CommandHandler(StartAuthorization)
export class StartAuthorizationHandler implements ICommandHandler<StartAuthorization> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ caller, authorizationId }: StartAuthorization): Promise<StartedInBrowser> {
    const value = randomBytes(32).toString('base64url');
    const row = await this.db.transaction(async (tx) => {
      const own = await lockOwnRequest(tx, caller, authorizationId, authorizationNotFound);
      if ((caller.sessionId ?? null) === null) throw new Forbidden('The start URL opens in your signed-in browser; with an API key, use the loopback flow (`openbot connections authorize`).');
      if (own.request_record_id === null) throw authorizationNotFound();
      await tx.count(`UPDATE app_oauth_authorizations SET binding = 'browser', browser_hash = $2, loopback_redirect = NULL WHERE id = $1`, [own.id, bindingHash(value)]);
      return own;
    });
    const record = await this.sealed.get(row.request_record_id as SealedRecordId);
    if (record === null || record.purpose !== SEALED.request) throw authorizationNotFound();
    return {
      location: record.value as string,
      cookie: { name: bindingCookieName(row.id), value, path: callbackPath(row.registration_id), maxAgeSeconds: AUTHORIZATION_LIFETIME_MS / 1000 },
    };
  }
}
