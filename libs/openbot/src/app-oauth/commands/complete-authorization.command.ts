import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { checkResponseIssuer } from '@openbot/protocol';
import { Database } from '../../database/sql';
import { refusedIssuer, refusedState, registrationNotFound } from '../app-oauth-failures';
import { CODE_EXCHANGE } from '../code-exchange.workflow';
import { registrationById } from '../oauth-records';
import { stateHash } from '../authorization-request';

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
 * `GET /v1/oauth/{registrationId}/callback`: the browser's return from the authorization server.
 * The state must have been issued for this very registration (one redirect URI per issuer and
 * client: a code relayed through another registration's callback is refused before it is sent
 * anywhere), unused and unexpired; the `iss` must be the registration's issuer (RFC 9207).
 * The request is used up, and the code exchange runs as an execution for the member who asked;
 * the answer shows the connection (or the developer test, DEVT-01) as that execution left it.
 */
export class CompleteAuthorization extends Command<CompletedAuthorization> {
  constructor(
    readonly registrationId: string,
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

  async execute({ registrationId, response }: CompleteAuthorization): Promise<CompletedAuthorization> {
    if (!isUuid(registrationId)) throw registrationNotFound();
    const registration = await registrationById(this.db, registrationId);
    if (registration === null) throw registrationNotFound();
    if (response.state === null) throw refusedState('state is missing');
    const request = await this.db.one<{ id: string; registration_id: string; connection_id: string | null; developer_test_id: string | null; organization_id: string; member_id: string; return_to: string | null; used: boolean; expired: boolean }>(
      `SELECT id, registration_id, connection_id, developer_test_id, organization_id, member_id, return_to, used_at IS NOT NULL AS used, expires_at <= now() AS expired FROM app_oauth_authorizations WHERE state_hash = $1`,
      [stateHash(response.state)],
    );
    if (request === undefined || request.registration_id !== registrationId) throw refusedState('the state was not issued for this registration');
    if (request.used) throw refusedState('the state was already used');
    if (request.expired) throw refusedState('the state has expired');
    try {
      checkResponseIssuer(registration.metadata, response.iss);
    } catch {
      throw refusedIssuer();
    }
    if (response.error === null && response.code === null) throw new InvalidInput([{ path: 'code', message: 'code is missing' }]);

    let start: () => void = () => undefined;
    const executionId = await this.db.transaction(async (tx) => {
      const used = await tx.count('UPDATE app_oauth_authorizations SET used_at = now() WHERE id = $1 AND used_at IS NULL', [request.id]);
      if (used === 0) throw refusedState('the state was already used');
      if (response.error !== null) return null;
      const submitted = await this.engine.submitIn(
        tx,
        {
          ...CODE_EXCHANGE.command({ authorizationId: request.id, code: response.code!, iss: response.iss }),
          scope: { kind: 'member', id: request.member_id, organizationId: request.organization_id },
          resource: request.developer_test_id !== null ? { type: 'app-developer-test', id: request.developer_test_id } : { type: 'app-connection', id: request.connection_id! },
        },
        { held: false },
      );
      await tx.count('UPDATE app_oauth_authorizations SET exchange_execution_id = $2 WHERE id = $1', [request.id, submitted.executionId]);
      start = submitted.start;
      return submitted.executionId;
    });
    start();
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
