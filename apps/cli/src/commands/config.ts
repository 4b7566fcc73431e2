import type { Command } from 'commander';
import { configPath, readConfig, writeConfig } from '../context/config';
import type { Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson } from '../context/output';

export function configCommand(program: Command, context: Context): void {
  const config = program.command('config').description('where the CLI connects: the server URL and the API key');

  config
    .command('set')
    .description('store the server URL and/or API key (file mode 0600)')
    .option('--url <url>', 'the server, e.g. http://127.0.0.1:8080')
    .option('--api-key <key>', 'an API key (obk_…)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { url?: string; apiKey?: string; json?: boolean }) => {
      if (options.url === undefined && options.apiKey === undefined) throw new UsageError('give --url and/or --api-key');
      if (options.url !== undefined) checkUrl(options.url);
      const path = configPath(context.env);
      const current = await readConfig(path);
      await writeConfig({ ...current, ...(options.url !== undefined ? { url: options.url } : {}), ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) }, path);
      context.io.out(options.json ? formatJson({ path }) : `saved ${path}\n`);
    });

  config
    .command('show')
    .description('print the stored settings (the key masked)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const path = configPath(context.env);
      const current = await readConfig(path);
      const shown = { path, url: current.url ?? null, apiKey: current.apiKey !== undefined ? mask(current.apiKey) : null };
      context.io.out(options.json ? formatJson(shown) : formatFields([['path', shown.path], ['url', shown.url], ['api key', shown.apiKey]]));
    });
}

/** Catch `openbot config set --url localhost:8080` now rather than at the first request. */
function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, not "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be http or https, not "${parsed.protocol}"`);
}

export function mask(secret: string): string {
  return secret.length <= 12 ? '****' : `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}
