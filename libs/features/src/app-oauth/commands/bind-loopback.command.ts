import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller, SealedRecordId } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { bindLoopbackIn, lockOwnRequest, loopbackRedirect } from '../authorization-binding';
import { SEALED } from '../oauth-records';
import { authorizationNotFound } from './start-authorization.command';

/**
 * `POST /v1/oauth/authorizations/{id}/loopback` (decision 066): binds an authorization request
 * (a connection's, or a developer test's) to a loopback listener on the machine of the member
 * who asked, and answers the authorization server's URL. The callback relays the answer to that
 * listener without using the request; the member then posts it with their own credential
 * (`POST /v1/oauth/authorizations/complete`). Another organization's request is 404, another
 * member's 403.
 */
export class BindLoopback extends Command<{ readonly authorizationUrl: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly authorizationId: string,
    readonly redirect: string,
  ) {
    super();
  }
}

@CommandHandler(BindLoopback)
export class BindLoopbackHandler implements ICommandHandler<BindLoopback> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ caller, authorizationId, redirect }: BindLoopback): Promise<{ authorizationUrl: string }> {
    const listener = loopbackRedirect(redirect, 'redirect');
    const row = await this.db.transaction(async (tx) => {
      const own = await lockOwnRequest(tx, caller, authorizationId, authorizationNotFound);
      if (own.request_record_id === null) throw authorizationNotFound();
      await bindLoopbackIn(tx, own, listener);
      return own;
    });
    const record = await this.sealed.get(row.request_record_id as SealedRecordId);
    if (record === null || record.purpose !== SEALED.request) throw authorizationNotFound();
    return { authorizationUrl: record.value as string };
  }
}
