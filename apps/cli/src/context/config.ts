import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './exit-codes';

/** What `openbot config set` stores. */
export interface CliConfig {
  readonly url?: string;
  readonly apiKey?: string;
}

/** `$OPENBOT_CONFIG`, else `$XDG_CONFIG_HOME/openbot/config.json`, else `~/.config/openbot/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPENBOT_CONFIG) return env.OPENBOT_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'openbot', 'config.json');
}

export async function readConfig(path = configPath()): Promise<CliConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not valid JSON: fix it or run \`openbot config set\` again`);
  }
  const fields = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  return {
    ...(typeof fields.url === 'string' ? { url: fields.url } : {}),
    ...(typeof fields.apiKey === 'string' ? { apiKey: fields.apiKey } : {}),
  };
}

/**
 * Writes the file with mode 0600 (it holds a credential) in a directory created 0700, through a
 * temporary file and a rename so a crash never leaves half a file.
 */
export async function writeConfig(config: CliConfig, path = configPath()): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** The server to talk to and the key to use: `OPENBOT_URL` / `OPENBOT_API_KEY` win over the file. */
export async function resolveConnection(env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; apiKey: string | undefined }> {
  const file = await readConfig(configPath(env));
  const url = env.OPENBOT_URL || file.url;
  if (!url) throw new UsageError('no server URL: run `openbot config set --url <url> --api-key <key>` (or set OPENBOT_URL)');
  return { url, apiKey: env.OPENBOT_API_KEY || file.apiKey };
}
