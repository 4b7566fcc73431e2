import { createOpenbotClient, type OpenbotClient } from '@openbot/client';
import { resolveConnection } from './config';
import { UsageError } from './exit-codes';
import type { Io } from './output';

export const CLI_VERSION = '0.1.0';

/** What every command gets: where to write and the environment to read. */
export interface Context {
  readonly io: Io;
  readonly env: NodeJS.ProcessEnv;
}

/** A client for the configured server with the configured API key (refuses without one unless `keyless`). */
export async function connect(context: Context, options: { keyless?: boolean } = {}): Promise<OpenbotClient> {
  const { url, apiKey } = await resolveConnection(context.env);
  if (apiKey === undefined && options.keyless !== true) {
    throw new UsageError('no API key: run `openbot config set --api-key <key>` (or set OPENBOT_API_KEY)');
  }
  return createOpenbotClient({ baseUrl: url, ...(apiKey !== undefined ? { apiKey } : {}), headers: { 'user-agent': `openbot-cli/${CLI_VERSION}` } });
}

/** `--limit` as the API takes it. */
export function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--limit must be a positive integer, not "${value}"`);
  return Number(value);
}
