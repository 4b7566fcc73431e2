import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  InternalServerErrorException,
  MethodNotAllowedException,
  NotFoundException,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { BudgetExceeded, Conflict, DomainFailure, Forbidden, InvalidInput, LimitReached, ModelNotPriced, NotFound, RateLimited, Unauthenticated, Unavailable } from '@openbot/domain';
import { errorCodes } from 'fastify';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { classifyError } from './classify-error';
import type { PublicError } from './public-error';

type Declared = Extract<PublicError, { kind: 'declared' }>;
type Fault = Extract<PublicError, { kind: 'fault' }>;

function declaredOf(error: unknown): Declared {
  const decision = classifyError(error);
  if (decision.kind !== 'declared') throw new Error(`expected a declared error, got a ${decision.status} fault`);
  return decision;
}

function faultOf(error: unknown): Fault {
  const decision = classifyError(error);
  if (decision.kind !== 'fault') throw new Error(`expected a fault, got declared ${decision.status} ${decision.body.type}`);
  return decision;
}

function pgError(code: string, message = 'server error'): DatabaseError {
  const error = new DatabaseError(message, message.length, 'error');
  error.code = code;
  return error;
}

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('classifyError: domain failures', () => {
  it('[ERR-02] BudgetExceeded → 402 naming the budget; ModelNotPriced → 402 naming the model', () => {
    const budget = declaredOf(new BudgetExceeded(null));
    expect({ status: budget.status, body: budget.body }).toEqual({ status: 402, body: { type: 'BudgetExceeded', message: expect.any(String), budgetId: null } });
    const unpriced = declaredOf(new ModelNotPriced('local/gpt-4o'));
    expect({ status: unpriced.status, body: unpriced.body }).toEqual({ status: 402, body: { type: 'ModelNotPriced', message: expect.any(String), model: 'local/gpt-4o' } });
  });

  it('[ERR-02] InvalidInput → 400 InvalidInput with its issues', () => {
    const issues = [{ path: 'tools.0.name', message: 'name must not be empty' }];
    const d = declaredOf(new InvalidInput(issues, 'Bad body.'));
    expect(d.status).toBe(400);
    expect(d.body).toEqual({ type: 'InvalidInput', message: 'Bad body.', issues });
    expect(d.headers).toBeUndefined();
  });

  it('[ERR-02] Unauthenticated → 401 with a Bearer challenge', () => {
    const d = declaredOf(new Unauthenticated());
    expect(d.status).toBe(401);
    expect(d.body.type).toBe('Unauthenticated');
    expect(d.body).not.toHaveProperty('issues');
    expect(d.headers).toEqual({ 'www-authenticate': 'Bearer' });
  });

  it('[ERR-02] Forbidden → 403 Forbidden', () => {
    const d = declaredOf(new Forbidden('Not yours.'));
    expect(d).toEqual({ kind: 'declared', status: 403, body: { type: 'Forbidden', message: 'Not yours.' } });
  });

  it('[ERR-02] NotFound → 404 <Resource>NotFound', () => {
    const d = declaredOf(new NotFound('ApiKey'));
    expect(d.status).toBe(404);
    expect(d.body).toEqual({ type: 'ApiKeyNotFound', message: 'ApiKey not found.' });
  });

  it('[ERR-02] Conflict → 409 with its own type', () => {
    const d = declaredOf(new Conflict('CommandKeyConflict', 'This key was used with another body.'));
    expect(d.status).toBe(409);
    expect(d.body).toEqual({ type: 'CommandKeyConflict', message: 'This key was used with another body.' });
  });

  it('[ERR-02] RateLimited → 429 with Retry-After in whole seconds, rounded up', () => {
    expect(declaredOf(new RateLimited(3)).headers).toEqual({ 'retry-after': '3' });
    const d = declaredOf(new RateLimited(0.2));
    expect(d.status).toBe(429);
    expect(d.body.type).toBe('RateLimited');
    expect(d.headers).toEqual({ 'retry-after': '1' });
  });

  it('[ERR-02] an organization limit is named in the body: LimitReached → 409 with limit and value, RateLimited → 429 with limit', () => {
    const reached = declaredOf(new LimitReached('apiKeys', 3, 'No room.'));
    expect({ status: reached.status, body: reached.body }).toEqual({ status: 409, body: { type: 'LimitReached', message: 'No room.', limit: 'apiKeys', value: 3 } });
    const limited = declaredOf(new RateLimited(5, 'Too many running.', 'runningTurns'));
    expect({ status: limited.status, body: limited.body, headers: limited.headers }).toEqual({
      status: 429,
      body: { type: 'RateLimited', message: 'Too many running.', limit: 'runningTurns' },
      headers: { 'retry-after': '5' },
    });
    // The other rate limits keep their body as it was.
    expect(Object.keys(declaredOf(new RateLimited(1)).body).sort()).toEqual(['message', 'type']);
  });

  it('[ERR-02] Unavailable → fault 503 unavailable (RequestFailed, not a declared body)', () => {
    const failure = new Unavailable('gate closed');
    const f = faultOf(failure);
    expect(f).toEqual({ kind: 'fault', status: 503, category: 'unavailable', cause: failure });
  });

  it('[ERR-02] an unknown DomainFailure kind is an internal fault, never a declared error', () => {
    class Strange extends DomainFailure {
      readonly kind = 'strange' as never;
      readonly type = 'Strange';
    }
    const f = faultOf(new Strange('x'));
    expect(f.status).toBe(500);
    expect(f.category).toBe('internal');
  });

  it('[ERR-02] a declared body carries only type, message and issues (no stack or cause)', () => {
    const failure = new NotFound('Chat');
    (failure as { cause?: unknown }).cause = new Error('SELECT * FROM chats -- private');
    const d = declaredOf(failure);
    expect(Object.keys(d.body).sort()).toEqual(['message', 'type']);
    expect(JSON.stringify(d)).not.toContain('private');
  });
});

describe('classifyError: framework errors', () => {
  it('[ERR-02] FST_ERR_CTP_BODY_TOO_LARGE → 413 PayloadTooLarge', () => {
    const d = declaredOf(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    expect(d.status).toBe(413);
    expect(d.body.type).toBe('PayloadTooLarge');
  });

  it('[ERR-02] FST_ERR_CTP_INVALID_MEDIA_TYPE → 415 UnsupportedMediaType', () => {
    const d = declaredOf(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE());
    expect(d.status).toBe(415);
    expect(d.body.type).toBe('UnsupportedMediaType');
  });

  it('[ERR-02] malformed JSON (SyntaxError with statusCode 400) → 400 InvalidInput', () => {
    let syntax: SyntaxError;
    try {
      JSON.parse('{"name": ');
      throw new Error('unreachable');
    } catch (error) {
      syntax = error as SyntaxError;
    }
    const d = declaredOf(Object.assign(syntax, { statusCode: 400 }));
    expect(d.status).toBe(400);
    expect(d.body).toEqual({ type: 'InvalidInput', message: 'The body is not valid JSON.', issues: [{ path: '', message: 'body is not valid JSON' }] });
    // The parser's own text (which may echo the body) is not sent.
    expect(JSON.stringify(d)).not.toContain('JSON at position');
  });

  it('[ERR-02] FST_ERR_CTP_INVALID_JSON_BODY → 400 InvalidInput', () => {
    const d = declaredOf(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY());
    expect(d.status).toBe(400);
    expect(d.body.type).toBe('InvalidInput');
  });

  it('[ERR-02] an empty JSON body and a wrong Content-Length → 400 InvalidInput', () => {
    expect(declaredOf(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY())).toMatchObject({ status: 400, body: { type: 'InvalidInput' } });
    expect(declaredOf(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH())).toMatchObject({ status: 400, body: { type: 'InvalidInput' } });
  });

  it('other FST_ 4xx errors keep their status as InvalidInput', () => {
    const d = declaredOf(Object.assign(new Error('bad header'), { code: 'FST_ERR_SOMETHING', statusCode: 431 }));
    expect(d.status).toBe(431);
    expect(d.body.type).toBe('InvalidInput');
  });

  it('[ERR-02] a SyntaxError of our own code (no statusCode) is an internal fault, not bad input', () => {
    let syntax: unknown;
    try {
      JSON.parse('not json');
    } catch (error) {
      syntax = error;
    }
    expect(faultOf(syntax)).toMatchObject({ status: 500, category: 'internal' });
  });

  it('[ERR-02] an outbound error carrying a 4xx statusCode (not FST_) is a fault: its status is not ours to return', () => {
    expect(faultOf(Object.assign(new Error('provider said 404'), { statusCode: 404 }))).toMatchObject({ status: 500, category: 'internal' });
    expect(faultOf(Object.assign(new Error('provider said 401'), { statusCode: 401, code: 'E_PROVIDER' }))).toMatchObject({
      status: 500,
    });
  });

  it('Nest HttpExceptions map to RouteNotFound, MethodNotAllowed, PayloadTooLarge, UnsupportedMediaType, InvalidInput', () => {
    expect(declaredOf(new NotFoundException())).toMatchObject({ status: 404, body: { type: 'RouteNotFound' } });
    expect(declaredOf(new MethodNotAllowedException())).toMatchObject({ status: 405, body: { type: 'MethodNotAllowed' } });
    expect(declaredOf(new PayloadTooLargeException())).toMatchObject({ status: 413, body: { type: 'PayloadTooLarge' } });
    expect(declaredOf(new UnsupportedMediaTypeException())).toMatchObject({ status: 415, body: { type: 'UnsupportedMediaType' } });
    expect(declaredOf(new BadRequestException('Validation failed (uuid is expected)'))).toEqual({
      kind: 'declared',
      status: 400,
      body: { type: 'InvalidInput', message: 'The request is not valid.', issues: [] },
    });
    expect(declaredOf(new ForbiddenException())).toMatchObject({ status: 403, body: { type: 'InvalidInput' } });
  });

  it('[ERR-02] a 5xx HttpException is an internal fault', () => {
    expect(faultOf(new InternalServerErrorException('boom'))).toMatchObject({ status: 500, category: 'internal' });
    expect(faultOf(new HttpException('bad gateway', 502))).toMatchObject({ status: 500, category: 'internal' });
  });
});

describe('classifyError: database and other faults', () => {
  it.each([
    ['ECONNREFUSED', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['ECONNRESET', withCode('read ECONNRESET', 'ECONNRESET')],
    ['ETIMEDOUT', withCode('connect ETIMEDOUT', 'ETIMEDOUT')],
    ['57P01 admin shutdown', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash shutdown', pgError('57P02')],
    ['57P03 cannot connect now', pgError('57P03', 'the database system is starting up')],
    ['08006 connection failure', pgError('08006')],
    ['08001 unable to connect', pgError('08001')],
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['Connection terminated due to connection timeout', new Error('Connection terminated due to connection timeout')],
  ])('[ERR-02] a PostgreSQL connection failure (%s) → fault 503 unavailable', (_name, error) => {
    const f = faultOf(error);
    expect(f.status).toBe(503);
    expect(f.category).toBe('unavailable');
    expect(f.cause).toBe(error);
  });

  it('[ERR-02] a connection failure wrapped by TypeORM or as a cause → 503 unavailable', () => {
    const wrapped = new QueryFailedError('SELECT 1', [], pgError('57P01', 'terminating connection due to administrator command'));
    expect(faultOf(wrapped)).toMatchObject({ status: 503, category: 'unavailable' });
    const caused = new Error('saving the turn failed', { cause: withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED') });
    expect(faultOf(caused)).toMatchObject({ status: 503, category: 'unavailable' });
  });

  it('[ERR-02] an AggregateError from a refused connection (both address families) → 503', () => {
    const aggregate = Object.assign(
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'), withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')], ''),
      { code: 'ECONNREFUSED' },
    );
    expect(faultOf(aggregate)).toMatchObject({ status: 503, category: 'unavailable' });
  });

  it.each([
    ['23505 unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['22P02 invalid text representation', pgError('22P02', 'invalid input syntax for type uuid')],
    ['42P01 undefined table', pgError('42P01', 'relation "chats" does not exist')],
    ['40001 serialization failure', pgError('40001')],
  ])('[ERR-02] a query error that is not a connection failure (%s) → fault 500 internal', (_name, error) => {
    expect(faultOf(error)).toMatchObject({ status: 500, category: 'internal' });
    expect(faultOf(new QueryFailedError('SELECT', [], error))).toMatchObject({ status: 500, category: 'internal' });
  });

  it('[ERR-02] a plain Error → fault 500 internal, keeping the cause for the sealed record only', () => {
    const error = new Error('TypeError in a handler');
    expect(classifyError(error)).toEqual({ kind: 'fault', status: 500, category: 'internal', cause: error });
  });

  it.each([['a string', 'boom'], ['null', null], ['undefined', undefined], ['a number', 42], ['an object', { message: 'x' }]])(
    '[ERR-02] a thrown non-Error (%s) → fault 500 internal',
    (_name, thrown) => {
      expect(faultOf(thrown)).toMatchObject({ status: 500, category: 'internal' });
    },
  );

  it('a cycle of causes does not loop forever', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(faultOf(a)).toMatchObject({ status: 500 });
  });
});
