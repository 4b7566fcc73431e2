import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Vault = Schemas['VaultBody'];
type Item = Schemas['VaultItemBody'];

const VAULT_COLUMNS: ReadonlyArray<Column<Vault>> = [
  ['id', (v) => v.id],
  ['name', (v) => v.name],
  ['created', (v) => v.createdAt],
];
const ITEM_COLUMNS: ReadonlyArray<Column<Item>> = [
  ['id', (i) => i.id],
  ['name', (i) => i.name],
  ['fields', (i) => i.fieldNames.join(',')],
  ['allowed hosts', (i) => i.allowedHosts.join(',')],
];

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

interface FieldOptions {
  readonly field?: string[];
  readonly fieldEnv?: string[];
}

/**
 * `--field name=value` and `--field-env name=VARIABLE` into a fields object. The second form
 * reads the value from the environment, so a secret need not appear in the command line (shell
 * history, `ps`).
 */
function fieldsOf(context: Context, options: FieldOptions): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of options.field ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError('--field takes name=value');
    fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  for (const pair of options.fieldEnv ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError('--field-env takes name=VARIABLE');
    const value = context.env[pair.slice(at + 1)];
    if (value === undefined) throw new UsageError(`--field-env: the variable ${pair.slice(at + 1)} is not set`);
    fields[pair.slice(0, at)] = value;
  }
  if (Object.keys(fields).length === 0) throw new UsageError('give at least one --field name=value or --field-env name=VARIABLE');
  return fields;
}

function printItem(context: Context, item: Item, json: boolean | undefined): void {
  context.io.out(
    json
      ? formatJson(item)
      : formatFields([
          ['id', item.id],
          ['vault', item.vaultId],
          ['name', item.name],
          ['fields', item.fieldNames.join(', ')],
          ['allowed hosts', item.allowedHosts.join(', ')],
        ]),
  );
}

function printVault(context: Context, vault: Vault, json: boolean | undefined): void {
  context.io.out(json ? formatJson(vault) : formatFields([['id', vault.id], ['name', vault.name], ['created', vault.createdAt]]));
}

/** `openbot vaults …`: Vaults and their items. Values go in and never come back out. */
export function vaultsCommand(program: Command, context: Context): void {
  const vaults = program.command('vaults').description('Vaults of secrets: items with named fields, used by reference { vaultItemId, field }');

  pageOptions(vaults.command('list').description('list Vaults')).action(async (options: PageOptions) => {
    const client = await connect(context);
    printPage(context, await unwrap(client.GET('/v1/vaults', { params: { query: pageQuery(options) } })), VAULT_COLUMNS, options, 'vaults list');
  });

  vaults
    .command('create <name>')
    .description('create a Vault')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printVault(context, await unwrap(client.POST('/v1/vaults', { body: { name } })), options.json);
    });

  vaults
    .command('get <vaultId>')
    .description('show a Vault')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printVault(context, await unwrap(client.GET('/v1/vaults/{id}', { params: { path: { id } } })), options.json);
    });

  vaults
    .command('delete <vaultId>')
    .description('delete a Vault and its items')
    .action(async (id: string) => {
      const client = await connect(context);
      const vault = await unwrap(client.DELETE('/v1/vaults/{id}', { params: { path: { id } } }));
      context.io.out(`deleted ${vault.id}\n`);
    });

  vaults
    .command('users <vaultId> [memberIds...]')
    .description('set the members granted vaults.use on a Vault (replaces the list; none: revoke all)')
    .action(async (id: string, memberIds: string[]) => {
      const client = await connect(context);
      const users = await unwrap(client.PUT('/v1/vaults/{id}/users', { params: { path: { id } }, body: { memberIds } }));
      context.io.out(formatFields([['vault', users.vaultId], ['members', users.memberIds.join(', ') || '(none)']]));
    });

  const items = vaults.command('items').description('items of a Vault');

  pageOptions(items.command('list <vaultId>').description("list a Vault's items (names, never values)")).action(async (id: string, options: PageOptions) => {
    const client = await connect(context);
    printPage(context, await unwrap(client.GET('/v1/vaults/{id}/items', { params: { path: { id }, query: pageQuery(options) } })), ITEM_COLUMNS, options, `vaults items list ${id}`);
  });

  items
    .command('add <vaultId> <name>')
    .description('add an item: its values are stored sealed and never shown again')
    .option('--field <name=value>', 'a field and its value (repeatable)', collect)
    .option('--field-env <name=VARIABLE>', 'a field whose value is read from an environment variable (repeatable)', collect)
    .requiredOption('--host <host>', 'a host the values may be sent to: name or *.example.com, optionally :port (repeatable)', collect)
    .option('--json', 'print the result as JSON')
    .action(async (vaultId: string, name: string, options: FieldOptions & { host: string[]; json?: boolean }) => {
      const fields = fieldsOf(context, options);
      const client = await connect(context);
      const item = await unwrap(client.POST('/v1/vaults/{id}/items', { params: { path: { id: vaultId } }, body: { name, fields, allowedHosts: options.host } }));
      printItem(context, item, options.json);
    });

  items
    .command('get <vaultId> <itemId>')
    .description('show an item (field names, never values)')
    .option('--json', 'print the result as JSON')
    .action(async (vaultId: string, itemId: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printItem(context, await unwrap(client.GET('/v1/vaults/{id}/items/{itemId}', { params: { path: { id: vaultId, itemId } } })), options.json);
    });

  items
    .command('set <vaultId> <itemId>')
    .description('replace all the fields of an item at once')
    .option('--field <name=value>', 'a field and its value (repeatable)', collect)
    .option('--field-env <name=VARIABLE>', 'a field whose value is read from an environment variable (repeatable)', collect)
    .option('--json', 'print the result as JSON')
    .action(async (vaultId: string, itemId: string, options: FieldOptions & { json?: boolean }) => {
      const fields = fieldsOf(context, options);
      const client = await connect(context);
      printItem(context, await unwrap(client.PUT('/v1/vaults/{id}/items/{itemId}', { params: { path: { id: vaultId, itemId } }, body: { fields } })), options.json);
    });

  items
    .command('update <vaultId> <itemId>')
    .description('rename an item or replace its allowed hosts (references keep working: they name the ID)')
    .option('--name <name>', 'the new name')
    .option('--host <host>', 'replaces the allowed hosts (repeatable)', collect)
    .option('--json', 'print the result as JSON')
    .action(async (vaultId: string, itemId: string, options: { name?: string; host?: string[]; json?: boolean }) => {
      if (options.name === undefined && options.host === undefined) throw new UsageError('give --name or --host');
      const client = await connect(context);
      const body = { ...(options.name !== undefined ? { name: options.name } : {}), ...(options.host !== undefined ? { allowedHosts: options.host } : {}) };
      printItem(context, await unwrap(client.PATCH('/v1/vaults/{id}/items/{itemId}', { params: { path: { id: vaultId, itemId } }, body })), options.json);
    });

  items
    .command('delete <vaultId> <itemId>')
    .description('delete an item; references to it fail at their next send')
    .action(async (vaultId: string, itemId: string) => {
      const client = await connect(context);
      const item = await unwrap(client.DELETE('/v1/vaults/{id}/items/{itemId}', { params: { path: { id: vaultId, itemId } } }));
      context.io.out(`deleted ${item.id}\n`);
    });
}
