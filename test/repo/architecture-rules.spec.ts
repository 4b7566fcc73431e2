import { engineTableSql, forwardingServices, httpKnowledge, productSources, rawPoolUse } from './source-rules';

/** Business code: everything but the HTTP layer (libs/api) and the HTTP client (libs/client). */
const BUSINESS = ['libs/domain/src', 'libs/core/src', 'libs/engine/src', 'libs/platform/src', 'libs/features/src', 'apps/server/src'];

describe('architecture rules checked on the syntax tree', () => {
  it('[ARCH-03] nothing outside libs/api knows HTTP: no HttpException family, no status helpers, no status codes thrown', () => {
    const findings = productSources(BUSINESS).flatMap(({ file, text }) => httpKnowledge(file, text));
    expect(findings).toEqual([]);
  });

  it('[ARCH-03] the check flags an HTTP exception, a status helper and a thrown status code', () => {
    const violation = [
      "import { Injectable, NotFoundException, HttpStatus } from '@nestjs/common';",
      'export function a(): never { throw new NotFoundException(); }',
      'export function b(): never { throw Object.assign(new Error("gone"), { statusCode: HttpStatus.GONE }); }',
      'export function c(): never { throw new DomainError("x", 409); }',
      'declare class DomainError extends Error { constructor(m: string, s: number) }',
      'export const keep = Injectable;',
    ].join('\n');
    expect(httpKnowledge('libs/features/src/probe.ts', violation).map((f) => f.what)).toEqual([
      'imports NotFoundException from @nestjs/common',
      'imports HttpStatus from @nestjs/common',
      'throws an error with a statusCode',
      'throws an error built with an HTTP status code',
    ]);
    expect(httpKnowledge('libs/features/src/probe.ts', "import { Injectable } from '@nestjs/common';\nthrow new Error('no');")).toEqual([]);
  });

  it('[ARCH-05] no injectable service of the platform or a feature only forwards calls to one dependency', () => {
    const findings = productSources(['libs/platform/src', 'libs/features/src']).flatMap(({ file, text }) => forwardingServices(file, text));
    expect(findings).toEqual([]);
  });

  it('[ARCH-05] the check flags a service whose every method returns a call of one injected dependency', () => {
    const forwarding = [
      "import { Inject, Injectable } from '@nestjs/common';",
      '@Injectable()',
      'export class BotService {',
      '  constructor(@Inject(BotQueries) private readonly queries: BotQueries) {}',
      '  get(id: string) { return this.queries.byId(id); }',
      '  async list(org: { id: string }, ...rest: string[]) { return await this.queries.list(org.id, ...rest); }',
      '}',
    ].join('\n');
    expect(forwardingServices('libs/features/src/probe.ts', forwarding).map((f) => f.what)).toEqual(['BotService only forwards to this.queries']);

    // A method that does anything of its own (a rule, a query, a second step) makes it a service.
    const working = forwarding.replace('get(id: string) { return this.queries.byId(id); }', 'get(id: string) { return this.queries.byId(id.trim()); }');
    expect(forwardingServices('libs/features/src/probe.ts', working)).toEqual([]);
  });

  it('feature SQL never names the engine\'s tables: features and the platform read executions through the engine\'s read API', () => {
    const findings = productSources(['libs/platform/src', 'libs/features/src']).flatMap(({ file, text }) => engineTableSql(file, text));
    expect(findings).toEqual([]);
    const join = 'const sql = `SELECT t.id, x.state FROM chat_turns t JOIN executions x ON x.id = t.execution_id WHERE t.id = $1`;';
    expect(engineTableSql('libs/features/src/probe.ts', join).map((f) => f.what)).toEqual(['SQL names the engine\'s table: "JOIN executions"']);
  });

  it('[ARCH-01] feature code reaches PostgreSQL only through the injected Database: no .pool, no pool.query or pool.connect, no withTransaction/withConnection', () => {
    // The raw pool stays in the wiring (database/, engine/engine.module.ts), the engine's hot path (libs/engine) and `openbot rekey`, an operator command on a pool of its own.
    const wiring = /^libs\/platform\/src\/(database\/|engine\/engine\.module\.ts$|rekey\/)/;
    const findings = productSources(['libs/platform/src', 'libs/features/src', 'libs/api/src'])
      .filter(({ file }) => !wiring.test(file))
      .flatMap(({ file, text }) => rawPoolUse(file, text));
    expect(findings).toEqual([]);
    const violation = [
      "import { type Queryable } from '@openbot/engine';",
      "import { withConnection, withTransaction } from '@openbot/engine/node';",
      'export async function a(deps: { db: { pool: Queryable } }) { return deps.db.pool.query("SELECT 1"); }',
      'export async function b(pool: Queryable) { return pool.query("SELECT 1"); }',
      'export const c = [withTransaction, withConnection];',
    ].join('\n');
    expect(rawPoolUse('libs/features/src/probe.ts', violation).map((f) => f.what)).toEqual([
      'imports withConnection from @openbot/engine/node',
      'imports withTransaction from @openbot/engine/node',
      'reaches the raw pool: deps.db.pool',
      'calls pool.query on a raw pool',
    ]);
    expect(rawPoolUse('libs/features/src/probe.ts', "export async function d(db: Database) { return db.transaction((tx) => tx.rows('SELECT 1')); }")).toEqual([]);
  });
});
