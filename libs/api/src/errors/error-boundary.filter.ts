import { Catch, Inject, Injectable, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { newId, type ErrorCategory, type ErrorId } from '@openbot/domain';
import { RecordFailure } from '@openbot/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { classifyError } from './classify-error';
import { declared, type PublicError } from './public-error';
import { RouteIndex } from './route-index';
import { UnsavedFailures } from './unsaved-failures';

export const ERROR_ID_HEADER = 'openbot-error-id';

/** How long a response waits for its error record while the database is known to be down. */
const RECORD_WAIT_WHEN_UNAVAILABLE_MS = 1_000;

/**
 * The one error boundary (ERR-01, ERR-02). Declared errors keep their status and type. Any
 * other fault answers RequestFailed with a category and an error ID; its full cause goes into
 * a sealed error record and never into the ordinary log, which only gets the ID.
 */
@Injectable()
@Catch()
export class ErrorBoundaryFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorBoundary');

  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(RouteIndex) private readonly routes: RouteIndex,
    @Inject(UnsavedFailures) private readonly unsaved: UnsavedFailures,
  ) {}

  async catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    let decision = classifyError(exception);
    if (decision.kind === 'declared' && decision.body.type === 'RouteNotFound') {
      const allowed = this.routes.allowedMethods(request.url);
      if (allowed.length > 0) {
        decision = declared(405, 'MethodNotAllowed', `This route accepts ${allowed.join(', ')}.`, {
          headers: { allow: allowed.join(', ') },
        });
      }
    }
    await this.respond(decision, request, reply);
  }

  private async respond(decision: PublicError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (reply.sent) return;
    if (decision.kind === 'declared') {
      for (const [name, value] of Object.entries(decision.headers ?? {})) void reply.header(name, value);
      await reply.status(decision.status).send(decision.body);
      return;
    }
    const body = await this.recordFault(decision, `http ${request.method} ${request.routeOptions.url ?? 'unmatched'}`, request.id);
    await reply.status(decision.status).header(ERROR_ID_HEADER, body.errorId).send(body);
  }

  /**
   * Records a server fault (sealed cause + error record) and answers its public body. Used by
   * this filter and by streams that already started, which send the body as an `error` event (ERR-03).
   */
  async recordFault(
    fault: unknown,
    origin: string,
    reqId?: unknown,
  ): Promise<{ type: 'RequestFailed'; category: ErrorCategory; errorId: ErrorId }> {
    const decision = isFaultDecision(fault) ? fault : classifyError(fault);
    const category = decision.kind === 'fault' ? decision.category : 'internal';
    const errorId = newId<ErrorId>();
    await this.record(errorId, decision.kind === 'fault' ? decision : { kind: 'fault', status: 500, category, cause: fault }, origin);
    this.logger.error({ errorId, category, origin, reqId }, 'request failed');
    return { type: 'RequestFailed', category, errorId };
  }

  private async record(errorId: ErrorId, decision: Extract<PublicError, { kind: 'fault' }>, origin: string): Promise<void> {
    const record = new RecordFailure(errorId, decision.category, origin, decision.cause);
    const saving = this.commands.execute(record);
    // The cause stays private even when its record cannot be saved now: it is kept in memory and
    // saved when the database answers again; the log only gets the ID.
    const keep = (): void => {
      this.logger.warn({ errorId }, 'error record not saved yet (database unavailable); retrying');
      this.unsaved.keep(record);
    };
    if (decision.category !== 'unavailable') {
      await saving.catch(keep);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), RECORD_WAIT_WHEN_UNAVAILABLE_MS)));
    let failed = false;
    const settled = saving.catch(() => {
      failed = true;
    });
    // A rejected save must clear the timer too, or it holds the event loop (shutdown, test workers).
    const outcome = await Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
    if (outcome === 'timeout') void settled.then(() => failed && keep());
    else if (failed) keep();
  }

}

function isFaultDecision(value: unknown): value is Extract<PublicError, { kind: 'fault' }> {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'fault' && 'cause' in value;
}
