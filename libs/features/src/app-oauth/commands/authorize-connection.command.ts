import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, identityForMember, InvalidInput, Unavailable, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { scopeUnion, STEP_UP_LIMIT } from '@openbot/protocol';
import { AppClient } from '../../apps/app-client';
import { connectionNotFound } from '../../apps/app-failures';
import { lockChangeableConnection } from '../../apps/changeable-connection';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { Database } from '../../../../platform/src/database/sql';
import { executionIdentity } from '../../../../platform/src/identity/identity-codec';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { AppAuthorizationRefused, AppAuthorizationUnavailable } from '../app-oauth-failures';
import { AUTHORIZATION_PREPARE, type PreparedAuthorization } from '../authorization-prepare.workflow';
import { AUTHORIZATION_LIFETIME_MS, issueAuthorization } from '../authorization-request';
import { bindLoopbackIn, loopbackRedirect, type AuthorizationBinding } from '../authorization-binding';
import { safeReturnTo } from '../../sso/commands/begin-sso-login.command';
import { recordAudit } from '../../../../platform/src/audit/record-audit';


/** What `POST /v1/connections/{id}/authorize` answers. */
export interface StartedAuthorization {
  readonly authorizationId: string;
  /** The URL to open: the start URL (`browser`), or the authorization server's URL (`loopback`). */
  readonly authorizationUrl: string;
  readonly binding: AuthorizationBinding;
  readonly executionId: string;
}

/**
 * `POST /v1/connections/{id}/authorize`: runs sign-in preparation as an execution (discovery
 * and registration through the call log), then hands out one authorization request (PKCE S256,
 * state, RFC 8707 resource, `prompt=consent`) whose browser leg belongs to the caller (decision
 * 066): with a `loopbackRedirect` it is bound to that listener on the caller's machine and the
 * authorization server's URL is answered (the caller posts the code back with their credential);
 * otherwise the caller must be a signed-in browser session, and the answer is OpenBot's start URL,
 * which that member's browser opens to bind itself. An API key without a loopback redirect is
 * 400 on `loopbackRedirect`. Who may change the connection may authorize it; a member connection
 * gets its member's own grant. The start is audited (`app-connection.authorization-started`).
 */
export class AuthorizeConnection extends Command<StartedAuthorization> {
  constructor(
    readonly caller: MemberCaller,
    readonly connectionId: string,
    readonly returnTo: string | null,
    readonly loopbackRedirect: string | null = null,
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

  async execute({ caller, connectionId, returnTo, loopbackRedirect: loopback }: AuthorizeConnection): Promise<StartedAuthorization> {
    // SSO's safe-return rules, one function for both (an open redirect otherwise, finding 4 of issue 44).
    if (returnTo !== null && safeReturnTo(returnTo) !== returnTo) {
      throw new InvalidInput([{ path: 'returnTo', message: 'returnTo must be a path of this server (one leading /)' }]);
    }
    const redirect = loopback === null ? null : loopbackRedirect(loopback, 'loopbackRedirect');
    const publicUrl = this.config.publicUrl;
    if (publicUrl === null) throw new Unavailable('App authorization needs OPENBOT_PUBLIC_URL: the callback URI is built from it.');
    await this.db.transaction(async (tx) => {
      await lockChangeableConnection(tx, caller, connectionId, 'share');
      // A member connection holds its member's own grant: only that member signs in for it (owners and admins see it, but do not sign in as it).
      const owner = await tx.one<{ owner: string; member_id: string | null }>('SELECT owner, member_id FROM app_connections WHERE id = $1', [connectionId]);
      if (owner?.owner === 'member' && owner.member_id !== caller.memberId) throw new Forbidden('A member connection is authorized by its own member only.');
    });
    if (redirect === null && (caller.sessionId ?? null) === null) {
      throw new InvalidInput([
        { path: 'loopbackRedirect', message: 'an API key has no browser to bind: give a loopback listener of your machine (the CLI’s `connections authorize` does), or start from your signed-in browser' },
      ]);
    }
    const target = await this.client.targetOf(this.db, connectionId);
    if (target === null) throw connectionNotFound();
    const serverUrl = await this.client.urlOf(target, { kind: 'member', id: caller.memberId });

    const { executionId } = await this.engine.submit({
      ...AUTHORIZATION_PREPARE.command({ connectionId, serverUrl }),
      scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
      identity: executionIdentity.encode(identityForMember(caller, { requires: ['apps.write'] })),
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
    const issued = await issueAuthorization(
      { db: this.db, sealed: this.sealed, publicUrl },
      prepared,
      scope,
      { connectionId, developerTestId: null, organizationId: caller.organizationId, memberId: caller.memberId, returnTo },
      async (tx, request) => {
        if (redirect !== null) await bindLoopbackIn(tx, { id: request.authorizationId }, redirect);
        await recordAudit(tx, {
          organizationId: caller.organizationId,
          actor: caller,
          action: 'app-connection.authorization-started',
          target: { type: 'app-connection', id: connectionId },
          details: { authorizationId: request.authorizationId, binding: redirect === null ? 'browser' : 'loopback', registrationId: prepared.registrationId },
        });
      },
    );
    return redirect === null
      ? { authorizationId: issued.authorizationId, authorizationUrl: issued.startUrl, binding: 'browser', executionId }
      : { authorizationId: issued.authorizationId, authorizationUrl: issued.serverUrl, binding: 'loopback', executionId };
  }
}
