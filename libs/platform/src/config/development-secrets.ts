import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseMasterKey, type Config, type MasterKey } from './config';

export interface DevelopmentSecrets {
  readonly adminToken: string | null;
  readonly masterKey: MasterKey;
  /** True when this start created a secret (the banner says so). */
  readonly generatedAdminToken: boolean;
  readonly generatedMasterKey: boolean;
}

/**
 * Fills in secrets that development may leave unset: generated once into the data dir and
 * reused on every later start. Production never gets here with them unset (parseConfig refuses).
 */
export async function resolveSecrets(config: Config): Promise<DevelopmentSecrets> {
  let generatedAdminToken = false;
  let generatedMasterKey = false;
  let adminToken = config.adminToken;
  if (adminToken === null && !config.production) {
    const file = join(config.dataDir, 'admin-token');
    generatedAdminToken = !existsSync(file);
    adminToken = await readOrCreate(config.dataDir, file, () => `oba_${randomBytes(32).toString('base64url')}`);
  }
  let masterKey = config.masterKey;
  if (masterKey === null) {
    const file = join(config.dataDir, 'master-key');
    generatedMasterKey = !existsSync(file);
    const value = await readOrCreate(config.dataDir, file, () => `dev1:${randomBytes(32).toString('base64')}`);
    masterKey = parseMasterKey(`OPENBOT_MASTER_KEY (from ${file})`, value);
  }
  return { adminToken, masterKey, generatedAdminToken, generatedMasterKey };
}

async function readOrCreate(dir: string, file: string, make: () => string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(dir, { recursive: true, mode: 0o711 });
  const value = make();
  await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return value;
}
