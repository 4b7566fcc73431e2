import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, identityForMember, InvalidInput, Unavailable, type MemberCaller } from '@openbot/domain';
import { Engine, type Json } from '@openbot/engine';
import { scopeUnion, STEP_UP_LIMIT } from '@openbot/protocol';
import { AppClient } from '../../apps/app-client';
import { connectionNotFound } from '../../apps/app-failures';
import { lockChangeableConnection } from '../../apps/changeable-connection';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { Database } from '../../database/sql';
import { SealedRecords } from '../../sealing/sealed-records';
import { AppAuthorizationRefused, AppAuthorizationUnavailable } from '../app-oauth-failures';
import { AUTHORIZATION_PREPARE, type PreparedAuthorization } from '../authorization-prepare.workflow';
import { AUTHORIZATION_LIFETIME_MS, issueAuthorization } from '../authorization-request';


/**
 * `POST /v1/connections/{id}/authorize`: runs sign-in preparation as an execution (discovery
 * and registration through the call log), then hands out one authorization URL (PKCE S256,
 * state, RFC 8707 resource) whose request is saved: the state's hash, the sealed verifier, the
 * registration it belongs to (its callback only), 10 minutes, once (issueAuthorization). Who may change the
 * connection may authorize it; a member connection gets its member's own grant.
 */
export class AuthorizeConnection extends Command<{ readonly authorizationUrl: string; readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
    readonly returnTo: string | null,
  ) {
    super();
  }
}

@CommandHandler(AuthorizeConnection)
export class AuthorizeConnectionHandler implements ICommandHandler<AuthorizeConnection> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, connectionId, returnTo }: AuthorizeConnection): Promise<{ authorizationUrl: string; executionId: string }> {
    if (returnTo !== null && (!returnTo.startsWith('/') || returnTo.startsWith('//') || returnTo.includes('\\'))) {
      throw new InvalidInput([{ path: 'returnTo', message: 'returnTo must be a path of this server (one leading /)' }]);
    }
    const publicUrl = this.config.publicUrl;
    if (publicUrl === null) throw new Unavailable('App authorization needs OPENBOT_PUBLIC_URL: the callback URI is built from it.');
    await this.db.transaction(async (tx) => {
      await lockChangeableConnection(tx, caller, connectionId, 'share');
      // A member connection holds its member's own grant: only that member signs in for it (owners and admins see it, but do not sign in as it).
      const owner = await tx.one<{ owner: string; member_id: string | null }>('SELECT owner, member_id FROM app_connections WHERE id = $1', [connectionId]);
      if (owner?.owner === 'member' && owner.member_id !== caller.memberId) throw new Forbidden('A member connection is authorized by its own member only.');
    });
    const target = await this.client.targetOf(this.db, connectionId);
    if (target === null) throw connectionNotFound();
    const serverUrl = await this.client.urlOf(target, { kind: 'member', id: caller.memberId });

    const { executionId } = await this.engine.submit({
      ...AUTHORIZATION_PREPARE.command({ connectionId, serverUrl }),
      scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
      identity: identityForMember(caller, { requires: ['apps.write'] }) as unknown as Json,
      resource: { type: 'app-connection', id: connectionId },
    });
    const ended = await this.engine.waitForEnd(executionId, AbortSignal.timeout(AUTHORIZATION_LIFETIME_MS / 10));
    const prepared = (await this.engine.result(executionId)) as PreparedAuthorization | undefined;
    if (ended !== 'completed' || prepared === undefined) throw new AppAuthorizationUnavailable();
    if ('failure' in prepared) throw new AppAuthorizationRefused(prepared.failure.reason, prepared.failure.message);

    // Scope step-up: a 403 insufficient_scope asked for more; this authorization asks for the union, a few times at most.
    const grant = await this.db.one<{ step_up_scope: string | null; step_ups: number }>('SELECT step_up_scope, step_ups FROM app_oauth_grants WHERE connection_id = $1', [connectionId]);
    if (grant?.step_up_scope != null && grant.step_ups >= STEP_UP_LIMIT) {
      throw new AppAuthorizationRefused('step_up_limit', `the server asked for more scope ${STEP_UP_LIMIT} times in a row`);
    }
    const scope = scopeUnion(prepared.scope, grant?.step_up_scope);
    const authorizationUrl = await issueAuthorization({ pool: this.db.pool, sealed: this.sealed }, prepared, scope, {
      connectionId,
      developerTestId: null,
      organizationId: caller.organizationId,
      memberId: caller.memberId,
      returnTo,
    });
    return { authorizationUrl, executionId };
  }
}
