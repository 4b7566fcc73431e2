import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type ApiKey = Schemas['ApiKeyBody'];
type Scope = NonNullable<Schemas['CreateApiKeyRequest']['scopes']>[number];

const COLUMNS: ReadonlyArray<Column<ApiKey>> = [
  ['id', (k) => k.id],
  ['name', (k) => k.name],
  ['scopes', (k) => k.scopes ?? 'all'],
  ['created', (k) => k.createdAt],
  ['last used', (k) => k.lastUsedAt],
  ['revoked', (k) => k.revokedAt],
];

export function keysCommand(program: Command, context: Context): void {
  const keys = program.command('keys').description('API keys of your organization');

  pageOptions(keys.command('list').description('list API keys')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/api-keys', { params: { query: pageQuery(options) } }));
    printPage(context, page, COLUMNS, options, 'keys list');
  });

  keys
    .command('create <name>')
    .description('create an API key (the secret is shown once)')
    .option('--scopes <permissions>', 'comma-separated permissions the key is limited to (default: the rights of the credential you call with)')
    .option('--expires-at <time>', 'ISO 8601 time when the key stops working')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: { scopes?: string; expiresAt?: string; json?: boolean }) => {
      const client = await connect(context);
      const scopes = options.scopes?.split(',').map((s) => s.trim()).filter((s) => s !== '') as Scope[] | undefined;
      const key = await unwrap(
        client.POST('/v1/api-keys', {
          body: { name, ...(scopes !== undefined ? { scopes } : {}), ...(options.expiresAt !== undefined ? { expiresAt: options.expiresAt } : {}) },
        }),
      );
      if (options.json) return context.io.out(formatJson(key));
      context.io.out(formatFields([['id', key.id], ['name', key.name], ['scopes', key.scopes ?? 'all'], ['expires', key.expiresAt], ['secret', key.secret]]));
      context.io.err('The secret is shown once.\n');
    });

  keys
    .command('revoke <id>')
    .description('revoke an API key (it stops working at once)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const key = await unwrap(client.DELETE('/v1/api-keys/{id}', { params: { path: { id } } }));
      context.io.out(options.json ? formatJson(key) : formatFields([['id', key.id], ['name', key.name], ['revoked', key.revokedAt]]));
    });
}
