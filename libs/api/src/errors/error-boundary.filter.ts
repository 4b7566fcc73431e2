import { Catch, Inject, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { ErrorId } from '@openbot/domain';
import { newId, RecordFailure } from '@openbot/openbot';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { classifyError } from './classify-error';
import { declared, type PublicError } from './public-error';
import { RouteIndex } from './route-index';

export const ERROR_ID_HEADER = 'openbot-error-id';

/** How long a response waits for its error record while the database is known to be down. */
const RECORD_WAIT_WHEN_UNAVAILABLE_MS = 1_000;

/**
 * The one error boundary (ERR-01, ERR-02). Declared errors keep their status and type. Any
 * other fault answers RequestFailed with a category and an error ID; its full cause goes into
 * a sealed error record and never into the ordinary log, which only gets the ID.
 */
@Catch()
export class ErrorBoundaryFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorBoundary');

  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(RouteIndex) private readonly routes: RouteIndex,
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
    const errorId = newId<ErrorId>();
    const origin = `http ${request.method} ${request.routeOptions.url ?? 'unmatched'}`;
    await this.record(errorId, decision, origin);
    this.logger.error({ errorId, category: decision.category, origin, reqId: request.id }, 'request failed');
    await reply
      .status(decision.status)
      .header(ERROR_ID_HEADER, errorId)
      .send({ type: 'RequestFailed', category: decision.category, errorId });
  }

  private async record(errorId: ErrorId, decision: Extract<PublicError, { kind: 'fault' }>, origin: string): Promise<void> {
    const saving = this.commands.execute(new RecordFailure(errorId, decision.category, origin, decision.cause));
    try {
      if (decision.category === 'unavailable') {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), RECORD_WAIT_WHEN_UNAVAILABLE_MS)));
        const outcome = await Promise.race([saving, timeout]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          saving.catch(() => this.logger.warn({ errorId }, 'error record could not be saved (database unavailable)'));
        }
      } else {
        await saving;
      }
    } catch {
      // The cause stays private even when its record cannot be saved: log the ID only.
      this.logger.warn({ errorId }, 'error record could not be saved');
    }
  }
}
