import { processAlive } from '@openbot/platform';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One OpenBot process per data dir: a second one would stop the first one's embedded
 * PostgreSQL when it cleans up a cluster it believes was left behind.
 */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  const file = join(dataDir, 'openbot.pid');
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
      throw new Error(`another OpenBot process (pid ${pid}) is using ${dataDir}; stop it or set OPENBOT_DATA_DIR`);
    }
  }
  writeFileSync(file, String(process.pid));
  return () => rmSync(file, { force: true });
}

