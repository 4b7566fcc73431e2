import { createHttpApp } from '@openbot/api';
import { createDataSource, rekey } from '@openbot/features';
import { MetricsServer, migrate, resolveSecrets, type Config, type RuntimeConfig } from '@openbot/platform';
import { Pool } from 'pg';
import { MIGRATIONS } from '../../../migrations';
import { openDatabase, type Database } from './database';
import { lockDataDir } from './instance-lock';

type Cleanup = () => Promise<void> | void;

/**
 * What `start`, `serve`, `migrate` and `rekey` do once the configuration is valid. main.ts loads this
 * module (and with it the whole server) only then: see there.
 */
export async function runCommand(command: 'start' | 'serve' | 'migrate' | 'rekey', config: Config): Promise<number> {
  const cleanups: Cleanup[] = [];
  const cleanup = async (): Promise<void> => {
    for (const step of cleanups.reverse().splice(0)) await step();
  };
  try {
    if (config.databaseUrl === null) cleanups.push(lockDataDir(config.dataDir));
    const database = await openDatabase(config, (line) => process.stderr.write(`${line}\n`));
    if (database.embedded) cleanups.push(() => database.embedded?.stop());
    if (command === 'migrate' || command === 'start') await runMigrations(database);
    if (command === 'migrate') {
      await cleanup();
      return 0;
    }
    if (command === 'rekey') {
      const code = await runRekey(config, database);
      await cleanup();
      return code;
    }
    return await serve(config, database, cleanups, cleanup);
  } catch (error) {
    process.stderr.write(`openbot: ${error instanceof Error ? error.message : String(error)}\n`);
    await cleanup().catch(() => undefined);
    return 1;
  }
}

async function runMigrations(database: Database): Promise<void> {
  const dataSource = await createDataSource({ url: database.url, migrations: MIGRATIONS, poolSize: 2 }).initialize();
  try {
    const { applied } = await migrate(dataSource);
    process.stderr.write(applied.length > 0 ? `openbot: applied migrations: ${applied.join(', ')}\n` : 'openbot: schema is up to date\n');
  } finally {
    await dataSource.destroy();
  }
}

/**
 * `openbot rekey` (decision 071): every sealed record under OPENBOT_MASTER_KEY, memory word
 * indexes rebuilt under it; progress on stderr. Exit 0 when nothing is left under another key
 * (every old key may then be dropped), 1 otherwise (run it again, or a key is missing).
 */
async function runRekey(config: Config, database: Database): Promise<number> {
  const secrets = await resolveSecrets(config);
  const pool = new Pool({ connectionString: database.url, max: 2 });
  try {
    const report = await rekey({ pool, masterKey: secrets.masterKey, oldMasterKeys: config.oldMasterKeys, log: (line) => process.stderr.write(`openbot rekey: ${line}\n`) });
    return report.remaining.size === 0 ? 0 : 1;
  } finally {
    await pool.end();
  }
}

async function serve(config: Config, database: Database, cleanups: Cleanup[], cleanup: () => Promise<void>): Promise<number> {
  const secrets = await resolveSecrets(config);
  const runtime: RuntimeConfig = { ...config, databaseUrl: database.url, masterKey: secrets.masterKey, adminToken: secrets.adminToken };
  const app = await createHttpApp({ config: runtime, migrations: MIGRATIONS });
  cleanups.push(() => app.close());
  await app.listen({ port: config.port, host: config.host });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const metricsPort = app.get(MetricsServer).port;
  printBanner(config, base, database, secrets, metricsPort);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) {
        process.stderr.write(`openbot: ${signal} again, exiting now\n`);
        void Promise.resolve(database.embedded?.stop()).finally(() => resolve(130));
        return;
      }
      stopping = true;
      process.stderr.write(`openbot: ${signal} received, draining requests and shutting down\n`);
      const force = setTimeout(() => {
        process.stderr.write('openbot: shutdown timed out, stopping the database now\n');
        void Promise.resolve(database.embedded?.stop()).finally(() => resolve(1));
      }, config.shutdownTimeoutMs + 5_000);
      force.unref();
      cleanup().then(
        () => resolve(0),
        (error: unknown) => {
          process.stderr.write(`openbot: shutdown failed: ${error instanceof Error ? error.message : String(error)}\n`);
          resolve(1);
        },
      );
    };
    // `on`, not `once`: while draining, a second signal must reach `stop` (exit now) and never fall
    // back to Node's default action, which would kill the process mid-shutdown.
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
}

function printBanner(config: Config, base: string, database: Database, secrets: Awaited<ReturnType<typeof resolveSecrets>>, metricsPort: number | null): void {
  const lines = [
    '',
    '  OpenBot is running',
    `  API       ${base}`,
    `  Docs      ${base}/docs`,
    `  Health    ${base}/readyz`,
    `  Database  ${database.embedded ? `embedded PostgreSQL in ${config.dataDir}/postgres` : 'DATABASE_URL'}`,
    `  Data dir  ${config.dataDir}`,
  ];
  if (config.metrics !== null && metricsPort !== null) {
    // Its own port, never the API's (docs/decisions/034-metrics.md).
    const host = config.metrics.host.includes(':') ? `[${config.metrics.host}]` : config.metrics.host;
    lines.push(`  Metrics   http://${host}:${metricsPort}/metrics`);
  }
  if (config.egressLoopbackByDefault) {
    // A newcomer's first model server is on their own machine (Ollama on 127.0.0.1:11434, LM Studio, vLLM).
    lines.push(`  Egress    loopback allowed (development default while OPENBOT_EGRESS_ALLOW is unset)`);
  }
  if (!config.production && config.adminToken === null && secrets.adminToken !== null) {
    lines.push(`  Admin     ${secrets.adminToken}  (stored in ${config.dataDir}/admin-token)`);
  }
  if (config.masterKey === null) {
    lines.push(
      '',
      `  WARNING: OPENBOT_MASTER_KEY is unset; sealed records use a development key ${secrets.generatedMasterKey ? 'generated' : 'stored'} in`,
      `  ${config.dataDir}/master-key. Anyone who reads that file reads every secret. Set OPENBOT_MASTER_KEY in production.`,
    );
  }
  lines.push('', '  Press Ctrl-C to stop.', '');
  process.stdout.write(`${lines.join('\n')}\n`);
}
