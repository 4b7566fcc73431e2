import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Forbidden, InvalidInput, isUuid, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { checkResponseIssuer } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { refusedIssuer, refusedState, registrationNotFound } from '../app-oauth-failures';
import { CODE_EXCHANGE } from '../code-exchange.workflow';
import { registrationById } from '../oauth-records';
import { stateHash } from '../authorization-request';
import { bindingCookieName, bindingHash, REQUEST_COLUMNS, type AuthorizationRequestRow } from '../authorization-binding';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { timingSafeEqual } from 'node:crypto';

/** How long the callback waits for the code exchange before it answers with the state the exchange is in. */
const ANSWER_WITHIN_MS = 60_000;

/** What the authorization server sent back to a registration's callback. */
export interface AuthorizationResponse {
  readonly code: string | null;
  readonly state: string | null;
  /** The `iss` parameter (RFC 9207): null when absent. */
  readonly iss: string | null;
  readonly error: string | null;
}

/** How an authorization ended: the connection's (or developer test's) state now, and why it is not ready when it is not. */
export interface CompletedAuthorization {
  readonly connectionId: string | null;
  /** The developer test whose developer signed in (DEVT-01), instead of a connection. */
  readonly developerTestId: string | null;
  readonly state: string;
  readonly reason: string | null;
  readonly returnTo: string | null;
  readonly executionId: string | null;
}

/**
 * Who brings an authorization response (decision 066): the browser at a registration's callback
 * (with its cookies: a browser-bound request needs its binding cookie), or the member who asked,
 * posting what their loopback listener received, with their own credential.
 */
export type AuthorizationResponder =
  | { readonly kind: 'callback'; readonly registrationId: string; readonly cookies: Readonly<Record<string, string | undefined>> }
  | { readonly kind: 'member'; readonly caller: MemberCaller };

/** The callback's answer for a loopback-bound request: the browser goes on to the member's listener; nothing was used. */
export interface RelayedAuthorization {
  readonly relayTo: string;
}

/**
 * `GET /v1/oauth/{registrationId}/callback` and `POST /v1/oauth/authorizations/complete`: an
 * authorization response comes back. The state must have been issued for this very registration
 * (one redirect URI per issuer and client: a code relayed through another registration's callback
 * is refused before it is sent anywhere), unused and unexpired; the `iss` must be the
 * registration's issuer (RFC 9207). The request must be bound to its member (decision 066): at
 * the callback, a browser-bound request needs the browser's binding cookie (403 otherwise, and
 * the request stays usable), a loopback-bound one is relayed to its listener unused, an unbound
 * one is 403; at the completion endpoint, only the member who asked completes a loopback-bound
 * request. The request is used up, and the code exchange runs as an execution for that member;
 * the answer shows the connection (or the developer test, DEVT-01) as that execution left it.
 */
export class CompleteAuthorization extends Command<CompletedAuthorization | RelayedAuthorization> {
  constructor(
    readonly responder: AuthorizationResponder,
    readonly response: AuthorizationResponse,
  ) {
    super();
  }
}

@CommandHandler(CompleteAuthorization)
export class CompleteAuthorizationHandler implements ICommandHandler<CompleteAuthorization> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ responder, response }: CompleteAuthorization): Promise<CompletedAuthorization | RelayedAuthorization> {
    if (responder.kind === 'callback' && !isUuid(responder.registrationId)) throw registrationNotFound();
    const named = responder.kind === 'callback' ? await registrationById(this.db, responder.registrationId) : null;
    if (responder.kind === 'callback' && named === null) throw registrationNotFound();
    if (response.state === null) throw refusedState('state is missing');
    const request = await this.db.one<AuthorizationRequestRow>(`SELECT ${REQUEST_COLUMNS} FROM app_oauth_authorizations WHERE state_hash = $1`, [stateHash(response.state)]);
    if (request === undefined) throw refusedState('the state was not issued for this registration');
    if (responder.kind === 'callback' && request.registration_id !== responder.registrationId) throw refusedState('the state was not issued for this registration');
    // Another organization's state reads as unknown.
    if (responder.kind === 'member' && request.organization_id !== responder.caller.organizationId) throw refusedState('the state was not issued for this registration');
    if (request.used) throw refusedState('the state was already used');
    if (request.expired) throw refusedState('the state has expired');
    const registration = named ?? (await registrationById(this.db, request.registration_id));
    if (registration === null) throw registrationNotFound();
    // RFC 9207 before anything is relayed or sent.
    try {
      checkResponseIssuer(registration.metadata, response.iss);
    } catch {
      throw refusedIssuer();
    }

    if (responder.kind === 'callback') {
      if (request.binding === 'loopback') return { relayTo: relayed(request.loopback_redirect!, response) };
      if (request.binding !== 'browser' || !sameBinding(responder.cookies[bindingCookieName(request.id)], request.browser_hash)) {
        throw new Forbidden('This sign-in was started by another member or in another browser: only the browser that opened its start URL may finish it.');
      }
    } else {
      if (request.member_id !== responder.caller.memberId) throw new Forbidden('Only the member who started this authorization may complete it.');
      if (request.binding !== 'loopback') throw new Forbidden('This authorization is not bound to a loopback listener: it finishes in the browser that started it.');
    }
    if (response.error === null && response.code === null) throw new InvalidInput([{ path: 'code', message: 'code is missing' }]);

    const executionId = await this.db.transaction(async (tx) => {
      const used = await tx.count('UPDATE app_oauth_authorizations SET used_at = now() WHERE id = $1 AND used_at IS NULL', [request.id]);
      if (used === 0) throw refusedState('the state was already used');
      await recordAudit(tx, {
        organizationId: request.organization_id,
        actor: responder.kind === 'member' ? responder.caller : { kind: 'member', memberId: request.member_id },
        action: 'app-connection.authorization-completed',
        target: request.developer_test_id !== null ? { type: 'app-developer-test', id: request.developer_test_id } : { type: 'app-connection', id: request.connection_id! },
        details: { authorizationId: request.id, binding: request.binding, error: response.error === null ? null : safeCode(response.error) },
      });
      if (response.error !== null) return null;
      const executionId = await this.engine.in(tx).submit({
        ...CODE_EXCHANGE.command({ authorizationId: request.id, code: response.code!, iss: response.iss }),
        scope: { kind: 'member', id: request.member_id, organizationId: request.organization_id },
        resource: request.developer_test_id !== null ? { type: 'app-developer-test', id: request.developer_test_id } : { type: 'app-connection', id: request.connection_id! },
      });
      await tx.count('UPDATE app_oauth_authorizations SET exchange_execution_id = $2 WHERE id = $1', [request.id, executionId]);
      return executionId;
    });
    let reason: string | null = response.error === null ? null : safeCode(response.error);
    if (executionId !== null) {
      const ended = await this.settled(executionId);
      const result = (await this.engine.result(executionId)) as { failure?: { reason: string } } | undefined;
      reason = ended !== 'completed' ? `exchange_${ended}` : (result?.failure?.reason ?? null);
    }
    const holder =
      request.developer_test_id !== null
        ? await this.db.one<{ state: string }>('SELECT state FROM app_developer_tests WHERE id = $1', [request.developer_test_id])
        : await this.db.one<{ state: string }>('SELECT state FROM app_connections WHERE id = $1', [request.connection_id]);
    return { connectionId: request.connection_id, developerTestId: request.developer_test_id, state: holder?.state ?? 'deleted', reason, returnTo: request.return_to, executionId };
  }

  /**
   * The exchange's end state, or `outcome_unknown` as soon as it waits there (a lost answer waits
   * for an operator: the browser gets the state it is in, not an endless wait), at most ANSWER_WITHIN_MS.
   */
  private async settled(executionId: string): Promise<string> {
    const stop = new AbortController();
    const deadline = AbortSignal.timeout(ANSWER_WITHIN_MS);
    deadline.addEventListener('abort', () => stop.abort(), { once: true });
    const watch = (async () => {
      while (!stop.signal.aborted) {
        if ((await this.engine.get(executionId))?.state === 'outcome_unknown') return stop.abort();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      return await this.engine.waitForEnd(executionId, stop.signal);
    } finally {
      stop.abort();
      await watch;
    }
  }
}

/** An OAuth error code as the server sent it, only when it looks like one (it is shown back). */
function safeCode(error: string): string {
  return /^[a-z_]{1,64}$/.test(error) ? error : 'authorization_error';
}

/** The binding cookie matches the hash saved when the member's browser opened the start URL. */
function sameBinding(cookie: string | undefined, saved: Buffer | null): boolean {
  if (cookie === undefined || cookie === '' || saved === null) return false;
  const given = bindingHash(cookie);
  return given.length === saved.length && timingSafeEqual(given, saved);
}

/** The loopback listener's URL with the authorization response in its query, as the server sent it. */
function relayed(listener: string, response: AuthorizationResponse): string {
  const target = new URL(listener);
  for (const [name, value] of [['code', response.code], ['state', response.state], ['iss', response.iss], ['error', response.error]] as const) {
    if (value !== null) target.searchParams.set(name, value);
  }
  return target.href;
}
