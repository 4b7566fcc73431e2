import { UnsavedFailures } from '../../libs/api/src/errors/unsaved-failures';
import { Body, Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import type { MemberCaller, SealedRecordId } from '@openbot/domain';
import { SealedRecords } from '@openbot/platform';
import { Type } from 'class-transformer';
import { IsArray, IsOptional, IsString, MinLength, ValidateNested } from 'class-validator';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Response, Test } from 'supertest';
import { Access, CurrentMember, Requires } from '../../libs/api/src/auth/access.decorator';
import { expectDeclaredStrict, issuePaths, UUID } from '../support/api-assertions';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * The error contract of docs/http-api.md "Errors" (ERR-01, ERR-02): server faults answer RequestFailed with
 * an error ID (body and header) and keep their cause sealed; declared errors keep their status and
 * type; bad input of any kind is never a server fault.
 */

/** Private fault texts: they must reach the sealed record and nowhere else. */
const CAUSE = `secret-cause-${randomBytes(12).toString('hex')}`;
const MEMBER_CAUSE = `secret-member-cause-${randomBytes(12).toString('hex')}`;
const INNER_CAUSE = `secret-inner-cause-${randomBytes(12).toString('hex')}`;
const THROWN_STRING = `secret-thrown-string-${randomBytes(12).toString('hex')}`;
const ALL_CAUSES = [CAUSE, MEMBER_CAUSE, INNER_CAUSE, THROWN_STRING];

class ParameterDto {
  @IsString()
  type!: string;
}

class ToolDto {
  @IsString()
  @MinLength(1)
  name!: string;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ParameterDto)
  parameters?: ParameterDto[];
}

class ProbeBotDto {
  @IsString()
  name!: string;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ToolDto)
  tools!: ToolDto[];
}

@Controller('probe')
class ProbeController {
  @Access('public')
  @Get('boom')
  boom(): never {
    throw new Error(CAUSE);
  }

  @Access('public')
  @Get('chained')
  chained(): never {
    throw new Error('outer wrapper', { cause: new Error(INNER_CAUSE) });
  }

  @Access('public')
  @Get('thrown-string')
  thrownString(): never {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a non-Error throw must be handled too
    throw THROWN_STRING;
  }

  /** A member route (no @Access): reached with an organization API key. */
  @Get('member-boom')
  @Requires('organization.read')
  memberBoom(@CurrentMember() caller: MemberCaller): never {
    throw new Error(`${MEMBER_CAUSE} for ${caller.memberId}`);
  }

  @Access('public')
  @Post('bots')
  @HttpCode(201)
  createBot(@Body() body: ProbeBotDto): { name: string; tools: string[] } {
    return { name: body.name, tools: body.tools.map((tool) => tool.name) };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

/** A server fault: exactly `{ type: 'RequestFailed', category, errorId }` and the same ID in the header. */
function expectFault(res: Response, status: number, category: string): string {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ type: 'RequestFailed', category, errorId: expect.stringMatching(UUID) });
  expect(Object.keys(res.body as object).sort()).toEqual(['category', 'errorId', 'type']);
  const errorId = (res.body as { errorId: string }).errorId;
  expect(res.headers['openbot-error-id']).toBe(errorId);
  return errorId;
}

describe('error boundary', () => {
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    t = await startTestApp({ imports: [ProbeModule] });
    secret = (await t.createOrganization('Errors Inc')).secret;
  });
  afterAll(async () => {
    await t.close();
  });

  async function sealedCauseOf(errorId: string): Promise<{ record: Record<string, unknown>; sealed: Record<string, unknown> }> {
    const [record] = await t.database.query<Record<string, unknown>>('SELECT * FROM error_records WHERE id = $1', [errorId]);
    expect(record).toBeDefined();
    const [sealed] = await t.database.query<Record<string, unknown>>('SELECT * FROM sealed_records WHERE id = $1', [record!.cause_id]);
    expect(sealed).toBeDefined();
    return { record: record!, sealed: sealed! };
  }

  describe('[ERR-01] [ERR-02] a server fault', () => {
    it('[ERR-02] an unexpected exception answers 500 RequestFailed internal with the error ID in body and header', async () => {
      const res = await t.http().get('/probe/boom');
      expectFault(res, 500, 'internal');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.text).not.toContain(CAUSE);
      expect(JSON.stringify(res.headers)).not.toContain(CAUSE);
    });

    it('[ERR-01] the full cause lives only in a sealed error record that the server can open', async () => {
      const errorId = expectFault(await t.http().get('/probe/boom'), 500, 'internal');
      const { record, sealed } = await sealedCauseOf(errorId);
      expect(record).toEqual(expect.objectContaining({ id: errorId, category: 'internal', cause_id: expect.stringMatching(UUID) }));
      // Nothing in clear: not in the error record, not in the sealed bytes (any encoding we could think of).
      expect(JSON.stringify(record)).not.toContain(CAUSE);
      const data = sealed.data as Buffer;
      expect(Buffer.isBuffer(data)).toBe(true);
      expect(data.includes(Buffer.from(CAUSE, 'utf8'))).toBe(false);
      expect(data.includes(Buffer.from(CAUSE, 'utf16le'))).toBe(false);
      expect(data.toString('base64')).not.toContain(Buffer.from(CAUSE).toString('base64').slice(0, 24));
      const [asJson] = await t.database.query<{ j: string }>('SELECT row_to_json(s)::text AS j FROM sealed_records s WHERE id = $1', [
        record.cause_id,
      ]);
      expect(asJson!.j).not.toContain(CAUSE);
      expect(asJson!.j).not.toContain(Buffer.from(CAUSE).toString('hex'));
      // The app's own SealedRecords opens it, and it holds the cause.
      const opened = await t.app.get(SealedRecords).get(record.cause_id as SealedRecordId);
      expect(opened).not.toBeNull();
      expect(JSON.stringify(opened!.value)).toContain(CAUSE);
      expect(opened!.value).toEqual(expect.objectContaining({ message: CAUSE }));
    });

    it('[ERR-01] a cause chain is sealed whole, inner causes included', async () => {
      const errorId = expectFault(await t.http().get('/probe/chained'), 500, 'internal');
      const { record, sealed } = await sealedCauseOf(errorId);
      expect((sealed.data as Buffer).includes(Buffer.from(INNER_CAUSE))).toBe(false);
      const opened = await t.app.get(SealedRecords).get(record.cause_id as SealedRecordId);
      expect(JSON.stringify(opened!.value)).toContain(INNER_CAUSE);
    });

    it('[ERR-02] a thrown non-Error value is a fault too, sealed like any other', async () => {
      const res = await t.http().get('/probe/thrown-string');
      const errorId = expectFault(res, 500, 'internal');
      expect(res.text).not.toContain(THROWN_STRING);
      const { record, sealed } = await sealedCauseOf(errorId);
      expect((sealed.data as Buffer).includes(Buffer.from(THROWN_STRING))).toBe(false);
      const opened = await t.app.get(SealedRecords).get(record.cause_id as SealedRecordId);
      expect(JSON.stringify(opened!.value)).toContain(THROWN_STRING);
    });

    it('[ERR-02] an API-key request meets the same boundary: same shape, sealed cause', async () => {
      const res = await t.http().get('/probe/member-boom').set('authorization', `Bearer ${secret}`);
      const errorId = expectFault(res, 500, 'internal');
      expect(res.text).not.toContain(MEMBER_CAUSE);
      const { record } = await sealedCauseOf(errorId);
      const opened = await t.app.get(SealedRecords).get(record.cause_id as SealedRecordId);
      expect(JSON.stringify(opened!.value)).toContain(MEMBER_CAUSE);
      // Without the key the same route is a declared 401, not a fault.
      expectDeclaredStrict(await t.http().get('/probe/member-boom'), 401, 'Unauthenticated');
    });

    it('[ERR-02] every fault gets its own error ID', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) ids.add(expectFault(await t.http().get('/probe/boom'), 500, 'internal'));
      expect(ids.size).toBe(3);
      const rows = await t.database.query<{ id: string }>('SELECT id FROM error_records WHERE id = ANY($1::uuid[])', [[...ids]]);
      expect(rows).toHaveLength(3);
    });

    // `t.logs` is reliable for the first app a test file starts only: nestjs-pino keeps one
    // process-wide pino-http instance, so a later app's lines go to the first app's destination.
    it('[ERR-02] the ordinary log names the error ID but never the private cause', async () => {
      const errorId = expectFault(await t.http().get('/probe/boom'), 500, 'internal');
      const memberErrorId = expectFault(await t.http().get('/probe/member-boom').set('authorization', `Bearer ${secret}`), 500, 'internal');
      const logs = t.logs.join('\n');
      expect(logs).toContain(errorId);
      expect(logs).toContain(memberErrorId);
      for (const cause of ALL_CAUSES) expect(logs).not.toContain(cause);
      expect(logs).not.toContain('outer wrapper');
      // Nor the credential.
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(t.adminToken);
    });
  });

  describe('[ERR-02] input validation paths', () => {
    const post = (body: unknown): Test => t.http().post('/probe/bots').send(body as object);

    it('a valid nested body passes', async () => {
      const res = await post({ name: 'b', tools: [{ name: 'search', parameters: [{ type: 'string' }] }, { name: 'fetch' }] }).expect(201);
      expect(res.body).toEqual({ name: 'b', tools: ['search', 'fetch'] });
    });

    it('[ERR-02] issues[].path is dotted through arrays and nested objects (tools.0.name)', async () => {
      let res = await post({ name: 'b', tools: [{}] });
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect([...new Set(issuePaths(res))]).toEqual(['tools.0.name']);

      res = await post({ name: 'b', tools: [{ name: 'ok' }, { name: 5 }] });
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect([...new Set(issuePaths(res))]).toEqual(['tools.1.name']);

      res = await post({ name: 'b', tools: [{ name: 'ok', parameters: [{ type: 'string' }, { type: 1 }] }] });
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect([...new Set(issuePaths(res))]).toEqual(['tools.0.parameters.1.type']);

      res = await post({ name: 'b', tools: [{ name: 'ok', colour: 'red' }] });
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect(issuePaths(res)).toEqual(['tools.0.colour']);

      res = await post({ name: 7, tools: [{ name: '' }] });
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect(new Set(issuePaths(res))).toEqual(new Set(['name', 'tools.0.name']));
    });

    it.each([
      ['tools is a string', { name: 'b', tools: 'search' }, 'tools'],
      ['tools is missing', { name: 'b' }, 'tools'],
      ['a tool is null', { name: 'b', tools: [null] }, 'tools.0'],
      ['a tool is a string', { name: 'b', tools: ['search'] }, 'tools.0'],
    ])('[ERR-02] %s is 400 with a path starting at %s', async (_label, body, path) => {
      const res = await post(body);
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect(issuePaths(res).length).toBeGreaterThan(0);
      for (const p of issuePaths(res)) expect(p === path || p.startsWith(`${path}.`)).toBe(true);
    });
  });

  describe('[ERR-02] declared errors on real routes', () => {
    const admin = (): string => `Bearer ${t.adminToken}`;

    it('malformed JSON with content-type application/json is 400 InvalidInput', async () => {
      for (const raw of ['{"name":', '{name: "Acme"}', "{'name':'Acme'}", '{"name":"Acme",}', '\u0000', 'undefined']) {
        const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(raw);
        expectDeclaredStrict(res, 400, 'InvalidInput');
      }
      const member = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${secret}`).set('content-type', 'application/json').send('{');
      expectDeclaredStrict(member, 400, 'InvalidInput');
    });

    it('a JSON value that is not an object where an object is expected is 400 InvalidInput', async () => {
      for (const raw of ['[{"name":"Acme"}]', '[]', '"Acme"', '42', 'true', 'null', '{"name":"Acme"} {"name":"Again"}']) {
        const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(raw);
        expectDeclaredStrict(res, 400, 'InvalidInput');
      }
      const nested = await t.http().post('/probe/bots').set('content-type', 'application/json').send('[{"name":"b","tools":[]}]');
      expectDeclaredStrict(nested, 400, 'InvalidInput');
      const organizations = await t.database.query<{ name: string }>('SELECT name FROM organizations');
      expect(organizations.map((o) => o.name)).toEqual(['Errors Inc']);
    });

    it('a form body (application/x-www-form-urlencoded) is 415, never read as input', async () => {
      const res = await t.http().post('/v1/organizations').set('authorization', admin()).type('form').send('name=Form+Corp');
      expectDeclaredStrict(res, 415, 'UnsupportedMediaType');
      const keys = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${secret}`).type('form').send('name=form-key');
      expectDeclaredStrict(keys, 415, 'UnsupportedMediaType');
      const organizations = await t.database.query<{ name: string }>('SELECT name FROM organizations');
      expect(organizations.map((o) => o.name)).not.toContain('Form Corp');
    });

    it('a string holding the NUL character (which PostgreSQL text cannot store) is 400 naming the field', async () => {
      const org = await t.http().post('/v1/organizations').set('authorization', admin()).send({ name: 'Nul\u0000Corp' });
      expectDeclaredStrict(org, 400, 'InvalidInput');
      expect(issuePaths(org)).toEqual(['name']);
      const key = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${secret}`).send({ name: '\u0000' });
      expectDeclaredStrict(key, 400, 'InvalidInput');
      expect(issuePaths(key)).toEqual(['name']);
      const nested = await t.http().post('/probe/bots').send({ name: 'b', tools: [{ name: 'ok' }, { name: 'x\u0000' }] });
      expectDeclaredStrict(nested, 400, 'InvalidInput');
      expect(issuePaths(nested)).toEqual(['tools.1.name']);
    });

    it('a body nested thousands of levels deep is 400 InvalidInput, not a stack overflow', async () => {
      const deepArray = `${'['.repeat(5000)}${']'.repeat(5000)}`;
      const deepObject = `{"name":"Deep","extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
      for (const raw of [deepArray, deepObject]) {
        const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(raw);
        expectDeclaredStrict(res, 400, 'InvalidInput');
      }
    });

    it('an empty body with content-type application/json is no body: where one is required it is 400 InvalidInput naming what is missing', async () => {
      const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send('');
      expectDeclaredStrict(res, 400, 'InvalidInput');
      expect([...new Set(issuePaths(res))]).toEqual(['name']);
    });

    it('a text/plain body is 415 UnsupportedMediaType', async () => {
      const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'text/plain').send('{"name":"Acme"}');
      expectDeclaredStrict(res, 415, 'UnsupportedMediaType');
    });

    it.each(['application/xml', 'text/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'text/html'])(
      '%s is 415 UnsupportedMediaType',
      async (contentType) => {
        const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', contentType).send('<name>Acme</name>');
        expectDeclaredStrict(res, 415, 'UnsupportedMediaType');
      },
    );

    it('a body larger than 1 MiB is 413 PayloadTooLarge', async () => {
      const raw = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 16) });
      const res = await t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(raw);
      expectDeclaredStrict(res, 413, 'PayloadTooLarge');
      const member = await t.http().post('/v1/api-keys').set('authorization', `Bearer ${secret}`).set('content-type', 'application/json').send(raw);
      expectDeclaredStrict(member, 413, 'PayloadTooLarge');
    });

    it('a chunked body (no Content-Length) growing past 1 MiB is 413 PayloadTooLarge', async () => {
      const server = t.app.getHttpServer();
      if (server.address() === null) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'POST', path: '/v1/organizations', headers: { 'content-type': 'application/json', authorization: admin() } },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.write('{"name":"');
        const chunk = 'y'.repeat(64 * 1024);
        let sent = 0;
        const pump = (): void => {
          while (sent < 1024 * 1024 + 128 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) {
              req.once('drain', pump);
              return;
            }
          }
          req.end('"}');
        };
        pump();
      });
      expect(status).toBe(413);
      expect(JSON.parse(body)).toEqual({ type: 'PayloadTooLarge', message: expect.any(String) });
    });

    it('a URL with broken percent-encoding is a declared 400 InvalidInput, not the router\'s own body', async () => {
      for (const path of ['/v1/api-keys/%E0%A4%A', '/v1/api-keys/%zz', '/nope/%E0%A4%A']) {
        const method = path.startsWith('/v1/api-keys') ? 'delete' : 'get';
        const res = await t.http()[method](path).set('authorization', `Bearer ${secret}`);
        expectDeclaredStrict(res, 400, 'InvalidInput');
      }
    });

    it('an unknown route is 404 RouteNotFound, with or without credentials', async () => {
      for (const [method, path] of [
        ['get', '/nope'],
        ['get', '/v1'],
        ['get', '/v1/nope'],
        ['post', '/v1/nope'],
        ['get', '/v1/api-keys/x/y'],
        ['delete', '/v1/organizations/0190c3f0-1234-7abc-8def-0123456789ab'],
        ['get', '/v2/me'],
      ] as const) {
        expectDeclaredStrict(await t.http()[method](path), 404, 'RouteNotFound');
        expectDeclaredStrict(await t.http()[method](path).set('authorization', `Bearer ${secret}`), 404, 'RouteNotFound');
      }
    });

    it('a known path with another method is 405 MethodNotAllowed with an Allow header', async () => {
      const cases: Array<[method: 'put' | 'delete' | 'post' | 'patch' | 'get', path: string, allowed: string[]]> = [
        ['put', '/v1/me', ['GET']],
        ['post', '/v1/me', ['GET']],
        ['delete', '/healthz', ['GET']],
        ['post', '/readyz', ['GET']],
        ['patch', '/v1/organizations', ['GET', 'POST']],
        ['delete', '/v1/api-keys', ['GET', 'POST']],
        ['get', '/v1/api-keys/0190c3f0-1234-7abc-8def-0123456789ab', ['DELETE']],
        ['post', '/v1/api-keys/not-an-id', ['DELETE']],
      ];
      for (const [method, path, allowed] of cases) {
        const res = await t.http()[method](path).set('authorization', `Bearer ${secret}`);
        expectDeclaredStrict(res, 405, 'MethodNotAllowed');
        const allow = String(res.headers.allow ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter((m) => m !== '');
        for (const m of allowed) expect({ path, allow }).toEqual({ path, allow: expect.arrayContaining([m]) });
        expect({ path, allow }).toEqual({ path, allow: expect.not.arrayContaining([method.toUpperCase()]) });
      }
    });

    it('no bad input of any kind is answered as a server fault', async () => {
      const member = `Bearer ${secret}`;
      const attempts: Array<() => Promise<Response>> = [
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send('{"__proto__":{"name":"x"}}'),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send('{"constructor":{"prototype":{"x":1}}}'),
        () => t.http().post('/v1/organizations').set('authorization', admin()).send({ name: 'a'.repeat(100_000) }),
        () => t.http().post('/v1/organizations').set('authorization', admin()).send({ name: '\u0000' }),
        () => t.http().post('/v1/organizations').set('authorization', admin()).send({ name: '\ud800' }),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(`${'['.repeat(5000)}${']'.repeat(5000)}`),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').send(`{"name":"x","extra":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`),
        () => t.http().post('/probe/bots').set('content-type', 'application/json').send(`{"name":"b","tools":[{"name":"x","parameters":[${'['.repeat(3000)}${']'.repeat(3000)}]}]}`),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json; charset=utf-16').send('{"name":"x"}'),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/json').set('content-encoding', 'gzip').send('{"name":"x"}'),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', 'application/jsonx').send('{"name":"x"}'),
        () => t.http().post('/v1/organizations').set('authorization', admin()).set('content-type', '').send('{"name":"x"}'),
        () => t.http().get('/v1/organizations?limit=99999999999999999999999').set('authorization', admin()),
        () => t.http().get('/v1/organizations?after=%00').set('authorization', admin()),
        () => t.http().get('/v1/organizations?after=%E0%A4%A').set('authorization', admin()),
        () => t.http().get('/v1/organizations?after=ffffffff-ffff-ffff-ffff-ffffffffffff').set('authorization', admin()),
        () => t.http().get('/v1/api-keys?after=00000000-0000-0000-0000-000000000000&limit=1').set('authorization', member),
        () => t.http().delete('/v1/api-keys/%00').set('authorization', member),
        () => t.http().delete('/v1/api-keys/%E0%A4%A').set('authorization', member),
        () => t.http().delete(`/v1/api-keys/${'a'.repeat(5000)}`).set('authorization', member),
        () => t.http().delete('/v1/api-keys/ffffffff-ffff-ffff-ffff-ffffffffffff').set('authorization', member),
        () => t.http().post('/v1/api-keys').set('authorization', member).send({ name: 'k', expiresAt: '+9999-12-31T23:59:59Z' }),
        () => t.http().post('/v1/api-keys').set('authorization', member).send({ name: 'k', expiresAt: '2031-W01' }),
        () => t.http().post('/v1/api-keys').set('authorization', member).send({ name: 'k', expiresAt: '9999-12-31T23:59:59.999+14:00' }),
        () => t.http().post('/v1/api-keys').set('authorization', member).send({ name: 'k', expiresAt: '0000-01-01T00:00:00Z' }),
        () => t.http().get('/v1/me').set('authorization', `Bearer ${'\u00ff'.repeat(64)}`),
        () => t.http().get('/v1/me').set('authorization', `Bearer obk_${'f'.repeat(32)}_${'-'.repeat(43)}`),
        () => t.http().get('/v1/me').set('authorization', `Bearer obk_${'0'.repeat(32)}_${'_'.repeat(43)}`),
        () => t.http().get('/v1/me').set('x-request-id', 'x'.repeat(10_000)).set('authorization', member),
        () => t.http().post('/probe/bots').send({ name: 'b', tools: [{ name: 'x', parameters: 'nope' }] }),
        () => t.http().post('/probe/bots').send({ name: 'b', tools: Array.from({ length: 2000 }, () => ({})) }),
      ];
      const statuses: number[] = [];
      for (const attempt of attempts) {
        const res = await attempt();
        statuses.push(res.status);
        expect(res.headers['openbot-error-id']).toBeUndefined();
        if (res.status >= 400) {
          const type = (res.body as { type?: string }).type ?? '';
          expectDeclaredStrict(res, res.status, type);
        }
      }
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      const faults = await t.database.query<{ origin: string }>(
        `SELECT origin FROM error_records WHERE origin NOT LIKE '%/probe/%' ORDER BY created_at`,
      );
      expect(faults).toEqual([]);
    });
  });
});

/** A TCP proxy in front of the test database that can cut every connection, then come back. */
class DatabaseProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      this.track(client);
      this.track(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops accepting and destroys every open connection in both directions. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server === null ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}

describe('[ERR-02] database unreachable', () => {
  let db: TestDatabase;
  let proxy: DatabaseProxy;
  let t: TestApp;
  let secret: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = new DatabaseProxy({ host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    t = await startTestApp({ database: db, databaseUrl: viaProxy.toString() });
    secret = (await t.createOrganization('Outage Ltd')).secret;
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.cut();
    await db?.drop();
  });

  it('[ERR-02] requests that need the database answer 503 RequestFailed unavailable; /readyz answers 503 database down', async () => {
    await t.http().get('/v1/me').set('authorization', `Bearer ${secret}`).expect(200);
    await t.http().get('/readyz').expect(200);

    await proxy.cut();

    const me = await t.http().get('/v1/me').set('authorization', `Bearer ${secret}`);
    expectFault(me, 503, 'unavailable');
    outageErrorId = (me.body as { errorId: string }).errorId;
    expectFault(await t.http().get('/v1/api-keys').set('authorization', `Bearer ${secret}`), 503, 'unavailable');
    expectFault(await t.http().post('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).send({ name: 'During outage' }), 503, 'unavailable');

    const ready = await t.http().get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual(expect.objectContaining({ status: 'not-ready', database: 'down' }));

    // What does not need the database still answers as usual.
    await t.http().get('/healthz').expect(200, { status: 'ok' });
    expectDeclaredStrict(await t.http().get('/v1/me'), 401, 'Unauthenticated');
    expectDeclaredStrict(await t.http().get('/v1/nope'), 404, 'RouteNotFound');
    expectDeclaredStrict(
      await t.http().post('/v1/organizations').set('authorization', `Bearer ${t.adminToken}`).send({ name: '' }),
      400,
      'InvalidInput',
    );
  });

  let outageErrorId = '';

  it('the node serves again once the database is reachable again', async () => {
    await proxy.start(proxy.port);
    let ready = await t.http().get('/readyz');
    for (let i = 0; i < 20 && ready.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      ready = await t.http().get('/readyz');
    }
    expect(ready.status).toBe(200);
    await t.http().get('/v1/me').set('authorization', `Bearer ${secret}`).expect(200);
    const organizations = await db.query<{ name: string }>('SELECT name FROM organizations ORDER BY id');
    expect(organizations.map((o) => o.name)).toEqual(['Outage Ltd']);
  });

  it('[ERR-01] the error records of the outage are saved, sealed, once the database is back', async () => {
    expect(outageErrorId).not.toBe('');
    expect(await t.app.get(UnsavedFailures).flush()).toBe(0);
    const rows = await db.query<{ category: string; cause_id: string }>('SELECT category, cause_id FROM error_records WHERE id = $1', [outageErrorId]);
    expect(rows).toEqual([{ category: 'unavailable', cause_id: expect.any(String) }]);
    const cause = await t.app.get(SealedRecords).get(rows[0]!.cause_id as never);
    expect(cause?.purpose).toBe('error.cause');
  });
});
