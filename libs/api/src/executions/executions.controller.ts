import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { InvalidInput, isFinal, parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CancelExecution, DecideExecution, GetExecution, GetPlan, ListChildren, ObserveExecution, PauseExecution, ResumeExecution, type ExecutionEvent, type Json } from '@openbot/features';
import { OpenbotMetrics, OpenEventStream, type EventStreamLease } from '@openbot/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiOrganizationRateLimited } from '../errors/api-errors.decorator';
import { ErrorBoundaryFilter } from '../errors/error-boundary.filter';
import { formatSse, writeChunk } from './event-stream';
import { NODE_SHUTDOWN, OpenEventReads } from './open-event-reads';
import { ChildExecutionPage, DecisionRequest, EventPageBody, ExecutionBody, ExecutionStateBody, PausedStateBody, PlanBody } from './execution.dto';
import { ApiPageQuery } from '../openapi/page-query';

const KEEPALIVE_MS = 15_000;
const MAX_WAIT_SECONDS = 30;
const MAX_EVENTS_PER_POLL = 500;

@ApiTags('executions')
@ApiBearerAuth()
@Controller('v1/executions')
export class ExecutionsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(ErrorBoundaryFilter) private readonly boundary: ErrorBoundaryFilter,
    @Inject(OpenbotMetrics) private readonly metrics: OpenbotMetrics,
    @Inject(OpenEventReads) private readonly reads: OpenEventReads,
  ) {}

  @Get(':id')
  @Requires('executions.read')
  @ApiOperation({ summary: 'An execution: its state, generation and the resource it belongs to' })
  @ApiOkResponse({ type: ExecutionBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ExecutionBody> {
    const e = await this.queries.execute(new GetExecution(caller, id));
    return {
      id: e.id,
      kind: e.kind,
      state: e.state,
      generation: e.generation,
      resource: e.resource === null ? null : { type: e.resource.type, id: e.resource.id },
      paused: e.paused,
      limits: e.limits === null ? null : { maxSteps: e.limits.maxSteps, maxSeconds: e.limits.maxSeconds, maxOutputTokens: e.limits.maxOutputTokens, maxCostMicros: e.limits.maxCostMicros },
      spent:
        e.spent === null
          ? null
          : { steps: e.spent.steps, seconds: e.spent.seconds, outputTokens: e.spent.outputTokens, costMicros: e.spent.costMicros, unknownCostCalls: e.spent.unknownCostCalls },
      stop: e.stop,
      ...(e.errorId !== null ? { errorId: e.errorId } : {}),
      ...(e.category !== null ? { category: e.category } : {}),
      ...(e.detail !== null ? { detail: { status: e.detail.status, code: e.detail.code, message: e.detail.message } } : {}),
    };
  }

  @Post(':id/cancel')
  @Requires('executions.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Request cancellation',
    description: 'Enters `cancelling` unless the execution is final (then nothing changes and its state is answered). ' +
      'Cancelling does not claim the outside action stopped; the execution ends `cancelled` once its resources are released.',
  })
  @ApiResponse({ status: 202, type: ExecutionStateBody })
  @ApiErrors(401, 403, 404)
  async cancel(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ExecutionStateBody> {
    return this.commands.execute(new CancelExecution(caller, id));
  }

  @Post(':id/pause')
  @Requires('executions.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Pause an execution and its attached tasks',
    description:
      'No new sends; a running phase releases its resources and the execution waits, `paused`, until resumed. Its time does not count while paused. ' +
      'Repeating it changes nothing. A paused execution can still be cancelled; a decision on its approvals is recorded and acted on after the resume. ' +
      '409 `ExecutionFinal` on a final execution. Only the member it works for, an owner or an admin (403 otherwise).',
  })
  @ApiResponse({ status: 202, type: PausedStateBody })
  @ApiErrors(401, 403, 404, 409)
  async pause(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<PausedStateBody> {
    return this.commands.execute(new PauseExecution(caller, id));
  }

  @Post(':id/resume')
  @Requires('executions.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Resume a paused execution and its attached tasks',
    description:
      'It continues from its saved state. Repeating it changes nothing. 409 `ExecutionFinal` on a final execution; 409 `ParentPaused` on a task whose parent is paused (resume the parent).',
  })
  @ApiResponse({ status: 202, type: PausedStateBody })
  @ApiErrors(401, 403, 404, 409)
  async resume(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<PausedStateBody> {
    return this.commands.execute(new ResumeExecution(caller, id));
  }

  @Get(':id/children')
  @Requires('executions.read')
  @ApiOperation({ summary: 'The executions it started (its tasks), oldest first' })
  @ApiPageQuery()
  @ApiOkResponse({ type: ChildExecutionPage })
  @ApiErrors(400, 401, 403, 404)
  async children(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<ChildExecutionPage> {
    const page = await this.queries.execute(new ListChildren(caller, id, parsePageRequest(after, limit)));
    return { data: page.data.map((c) => ({ id: c.id, kind: c.kind, state: c.state, attached: c.attached, resource: c.resource })), next: page.next };
  }

  @Get(':id/plan')
  @Requires('executions.read')
  @ApiOperation({ summary: "The plan its update_plan tool saved last", description: '404 `PlanNotFound` while there is none.' })
  @ApiOkResponse({ type: PlanBody })
  @ApiErrors(401, 403, 404)
  async plan(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<PlanBody> {
    const plan = await this.queries.execute(new GetPlan(caller, id));
    return { steps: plan.steps.map((s) => ({ title: s.title, status: s.status })), updatedAt: new Date(plan.updatedAt).toISOString() };
  }

  @Post(':id/decision')
  @Requires('executions.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Resolve an execution waiting in outcome_unknown',
    description:
      '`succeeded` saves `result` as the lost call’s result and resumes; `failed` fails the execution; `stop` cancels it. 409 in any other state. ' +
      'Only the member the execution works for, an owner or an admin may decide (403 otherwise).',
  })
  @ApiResponse({ status: 202, type: ExecutionStateBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async decide(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: DecisionRequest): Promise<ExecutionStateBody> {
    return this.commands.execute(new DecideExecution(caller, id, body.decision, body.result as Json | undefined));
  }

  @Get(':id/events')
  @Requires('executions.read')
  @ApiOperation({
    summary: 'Read the event log: Server-Sent Events or JSON long poll',
    description:
      'With `Accept: text/event-stream`: SSE where `id:` is the sequence number; resume with `Last-Event-ID` (it wins over `after`); ' +
      'the stream ends after `execution.ended`; a comment line is sent every 15 s; the response has `Connection: close` and no chunked framing ' +
      '(its body ends when the connection closes). Otherwise a JSON long poll: answers as soon as one event ' +
      'after `after` exists, or after `wait` seconds (at most 30) with none; `ended` is true once the page holds `execution.ended`, and at once, ' +
      'without waiting, as `{ events: [], next: after, ended: true }` when `after` is at or past the final event of an ended execution. ' +
      'Closing a stream never cancels the execution. ' +
      'Open streams (SSE, and long polls while they wait) are capped per API key or session and per node (429 with `Retry-After`); ' +
      'an SSE stream ends cleanly after its maximum lifetime (`OPENBOT_STREAM_MAX_SECONDS`) or when its node shuts down: resume it with `Last-Event-ID`. ' +
      'A long poll that waits when its node shuts down answers at once with the events it has. ' +
      'A model call that failed an attempt emits `model.failed { step, attempt, category, retrying, detail? }` (`detail`: what the provider answered, scrubbed); ' +
      'one that waits for a rate limit and then goes on emits `model.waiting { step, attempt, reason, until, retryAfter }` (decision 082).',
  })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiQuery({ name: 'after', required: false, schema: { type: 'integer', minimum: 0, default: 0 } })
  @ApiQuery({ name: 'wait', required: false, schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0 } })
  @ApiHeader({ name: 'Last-Event-ID', required: false })
  @ApiOkResponse({ type: EventPageBody })
  @ApiOrganizationRateLimited('too many open event streams for this API key or session, for the organization (`streams`), or on this node')
  @ApiErrors(400, 401, 403, 404)
  async events(
    @CurrentMember() caller: MemberCaller,
    @Param('id') id: string,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Query('after') afterQuery: string | undefined,
    @Query('wait') waitQuery: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const sse = (accept ?? '').includes('text/event-stream');
    const after = parseCursor(sse && lastEventId !== undefined && lastEventId !== '' ? lastEventId : afterQuery, sse && lastEventId ? 'Last-Event-ID' : 'after');
    // This handler answers itself (`@Res()` without passthrough): Nest sending its result after an
    // SSE stream took the connection over built a FST_ERR_REP_ALREADY_SENT error, stack and all,
    // on every stream. Errors thrown before an answer still go through the exception filter.
    if (sse) {
      await this.stream(caller, id, after, request, reply);
      return;
    }
    const wait = parseWait(waitQuery);
    void reply.send(await this.longPoll(caller, id, after, wait, request));
  }

  private async longPoll(caller: MemberCaller, id: string, after: number, wait: number, request: FastifyRequest): Promise<EventPageBody> {
    const closed = new AbortController();
    request.raw.once('close', () => closed.abort());
    const forget = this.reads.track(closed);
    try {
      return await this.poll(caller, id, after, wait, closed.signal);
    } finally {
      forget();
    }
  }

  private async poll(caller: MemberCaller, id: string, after: number, wait: number, closed: AbortSignal): Promise<EventPageBody> {
    const events = await this.available(caller, id, after, closed);
    if (events.length === 0) {
      // Nothing after the cursor of an execution that has ended: nothing will ever come, so answer
      // `ended` at once instead of waiting. Its state is read first and the log again after, so an
      // end committed between the two reads is answered with its events.
      const { state } = await this.queries.execute(new GetExecution(caller, id));
      if (isFinal(state)) {
        const last = await this.available(caller, id, after, closed);
        const ended = last.length === 0 || last.some((e) => e.type === 'execution.ended');
        return { events: last as unknown as EventPageBody['events'], next: last.at(-1)?.seq ?? after, ended };
      }
    }
    if (events.length === 0 && wait > 0) {
      // Only a poll that waits holds the event-stream caps; one that answers at once is an ordinary request.
      const lease = await this.commands.execute(new OpenEventStream(caller));
      try {
        const waiting = AbortSignal.any([closed, AbortSignal.timeout(Math.min(wait * 1000, lease.lifetimeMs))]);
        const follow = await this.queries.execute(new ObserveExecution(caller, id, after, waiting, true));
        for await (const event of follow) {
          events.push(event);
          break;
        }
      } finally {
        await lease.release();
      }
      if (events.length > 0) {
        const rest = await this.queries.execute(new ObserveExecution(caller, id, events[0]!.seq, closed, false));
        for await (const event of rest) {
          events.push(event);
          if (events.length >= MAX_EVENTS_PER_POLL) break;
        }
      }
    }
    const last = events.at(-1);
    return {
      events: events as unknown as EventPageBody['events'],
      next: last?.seq ?? after,
      ended: events.some((e) => e.type === 'execution.ended'),
    };
  }

  /** The events after `after` that exist now, at most one poll's worth. */
  private async available(caller: MemberCaller, id: string, after: number, signal: AbortSignal): Promise<ExecutionEvent[]> {
    const events: ExecutionEvent[] = [];
    for await (const event of await this.queries.execute(new ObserveExecution(caller, id, after, signal, false))) {
      events.push(event);
      if (events.length >= MAX_EVENTS_PER_POLL) break;
    }
    return events;
  }

  /**
   * SSE (EVT-03, ERR-03, RES-03): access is checked before the first byte, so refusals are
   * ordinary JSON errors; after that a fault is sent as one `error` event with the RequestFailed
   * fields, and the stream closes. A client closing the stream only stops the reading.
   */
  private async stream(caller: MemberCaller, id: string, after: number, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const closed = new AbortController();
    const events = await this.queries.execute(new ObserveExecution(caller, id, after, closed.signal, true));
    // After the access check, before the first byte: a refusal is an ordinary 429 answer.
    const lease: EventStreamLease = await this.commands.execute(new OpenEventStream(caller));
    const forget = this.reads.track(closed);
    try {
      await this.serve(events, closed, lease, request, reply);
    } finally {
      forget();
      await lease.release(); // idempotent: serve released it already unless it failed before writing
    }
  }

  /**
   * Writes the events until the end, a fault, the client closing, or the stream's lifetime: then
   * the stream ends cleanly after a whole event, and the client resumes with `Last-Event-ID`. A
   * writer stuck on a reader that stopped reading is cut off at the lifetime too.
   */
  private async serve(events: AsyncIterable<ExecutionEvent>, closed: AbortController, lease: EventStreamLease, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    raw.on('close', () => closed.abort(STREAM_OVER));
    // The stream's body ends when its connection closes (`Connection: close`, no chunked framing):
    // each event then leaves as its one shared frame, without a chunk header and trailer around it
    // per reader, about a third less CPU per write with a thousand readers (decision 057).
    raw.useChunkedEncodingByDefault = false;
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      ...(typeof request.id === 'string' ? { 'x-request-id': request.id } : {}),
    });
    raw.flushHeaders();
    // Open from the headers sent to the end below (decision 034: the observers gauge).
    this.metrics.sseOpened();
    const keepalive = setInterval(() => {
      if (!raw.destroyed) raw.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    const lifetime = setTimeout(() => {
      closed.abort(LIFETIME_REACHED);
      if (raw.writableNeedDrain) raw.destroy();
    }, lease.lifetimeMs);
    try {
      await writeChunk(raw, ': connected\n\n');
      // The events one wake-up hands over are written in one microtask run; Node corks the socket
      // until the tick ends, so they leave in one system call without holding them any longer.
      for await (const event of events) {
        const full = writeChunk(raw, formatSse(event));
        if (full !== undefined) await full;
      }
    } catch (error) {
      if (!closed.signal.aborted && !raw.destroyed) {
        try {
          const failure = await this.boundary.recordFault(error, `sse GET /v1/executions/:id/events`);
          await writeChunk(raw, `event: error\ndata: ${JSON.stringify(failure)}\n\n`);
        } catch {
          // A fault while saving or encoding the failure closes the connection (ERR-03).
        }
      }
    } finally {
      clearInterval(keepalive);
      clearTimeout(lifetime);
      this.metrics.sseClosed();
      closed.abort(STREAM_OVER);
      // Released before the end is sent: a client resuming at once finds its slot free.
      await lease.release();
      // The first reason to stop wins; a stream the server ends tells the client to resume.
      if (!raw.destroyed) raw.end(CLOSING_COMMENTS.get(closed.signal.reason));
    }
  }
}

/**
 * The abort reason of a stream that ended or whose client left: a constant, so ending a stream
 * builds no `DOMException` (with its stack) as a bare `abort()` does. It has no closing comment.
 */
const STREAM_OVER = Symbol('stream over');
/** The abort reason of a stream that reached its lifetime (the lease's `lifetimeMs`). */
const LIFETIME_REACHED = Symbol('stream lifetime reached');
/** The last words of a stream the server ends, by abort reason; a client that closed gets none. */
const CLOSING_COMMENTS = new Map<unknown, string>([
  [LIFETIME_REACHED, ': lifetime reached; resume with Last-Event-ID\n\n'],
  [NODE_SHUTDOWN, ': node shutting down; resume with Last-Event-ID\n\n'],
]);

function parseCursor(value: string | undefined, path: string): number {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,9}$/.test(value)) throw new InvalidInput([{ path, message: `${path} must be a non-negative integer` }]);
  return Number(value);
}

function parseWait(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,3}$/.test(value) || Number(value) > MAX_WAIT_SECONDS) {
    throw new InvalidInput([{ path: 'wait', message: `wait must be an integer from 0 to ${MAX_WAIT_SECONDS}` }]);
  }
  return Number(value);
}
