import type { ModuleMetadata } from '@nestjs/common';
import type { Clock } from '@openbot/engine';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '@openbot/api';
import { parseConfig, type RuntimeConfig } from '@openbot/platform';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { MIGRATIONS } from '../../migrations';
import { createTestDatabase, type TestDatabase } from './test-database';
import { engineClockModule } from './workflow-kit';

export interface TestApp {
  readonly app: NestFastifyApplication;
  readonly config: RuntimeConfig;
  readonly database: TestDatabase;
  readonly adminToken: string;
  /** Every JSON log line the app wrote, raw. */
  readonly logs: string[];
  http(): ReturnType<typeof request>;
  /** Creates an organization through the API and returns its owner's key. */
  createOrganization(name?: string): Promise<{ organizationId: string; memberId: string; apiKeyId: string; secret: string }>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly imports?: ModuleMetadata['imports'];
  /** An existing database instead of a fresh migrated one. */
  readonly database?: TestDatabase;
  /** Overrides the database URL the app connects to (e.g. through a proxy). */
  readonly databaseUrl?: string;
  readonly env?: Record<string, string>;
  /** The key sealed records are sealed with: two apps on one database (two nodes) share it. */
  readonly masterKey?: RuntimeConfig['masterKey'];
  /** The engine's clock (a ManualClock the test moves, test/support/workflow-kit.ts); default: the system clock. */
  readonly clock?: Clock;
}

/**
 * Every test client comes from 127.0.0.1 and many tests fail authentication on purpose: the
 * per-address and per-key caps are lifted unless a test sets them (test/e2e/request-limits.spec.ts).
 */
const UNLIMITED = {
  OPENBOT_AUTH_FAILURE_LIMIT: '1000000',
  OPENBOT_SSO_LOGIN_LIMIT: '1000000',
  OPENBOT_STREAMS_PER_KEY: '1000000',
  OPENBOT_STREAMS_PER_NODE: '1000000',
};

/** The real app on Fastify with a fresh database, as supertest drives it (no port needed). */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const adminToken = `test-admin-${randomBytes(12).toString('hex')}`;
  // The `fs` object store writes under the data dir: a throwaway one unless the test names its own.
  const ownDataDir = options.env?.OPENBOT_DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'openbot-test-app-')) : null;
  const base = parseConfig({
    OPENBOT_ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'info',
    OPENBOT_EGRESS_ALLOW: '127.0.0.1',
    ...UNLIMITED,
    ...(ownDataDir !== null ? { OPENBOT_DATA_DIR: ownDataDir } : {}),
    ...options.env,
  });
  const config: RuntimeConfig = {
    ...base,
    databaseUrl: options.databaseUrl ?? database.url,
    masterKey: options.masterKey ?? { id: 'test1', key: randomBytes(32) },
  };
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  const imports = options.clock === undefined ? options.imports : [...(options.imports ?? []), engineClockModule(options.clock)];
  const app = await createHttpApp({ config, migrations: MIGRATIONS, logDestination, imports });
  await app.getHttpAdapter().getInstance().ready();
  const http = (): ReturnType<typeof request> => request(app.getHttpServer());
  return {
    app,
    config,
    database,
    adminToken,
    logs,
    http,
    async createOrganization(name = 'Acme') {
      const res = await http().post('/v1/organizations').set('authorization', `Bearer ${adminToken}`).send({ name }).expect(201);
      const body = res.body as { organization: { id: string }; member: { id: string }; apiKey: { id: string; secret: string } };
      return { organizationId: body.organization.id, memberId: body.member.id, apiKeyId: body.apiKey.id, secret: body.apiKey.secret };
    },
    async close() {
      await app.close();
      if (options.database === undefined) await database.drop();
      if (ownDataDir !== null) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}
