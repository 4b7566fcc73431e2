import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Provider = Schemas['ModelProviderBody'];
const KINDS: ReadonlyArray<Provider['kind']> = ['openai-compatible', 'anthropic'];

const COLUMNS: ReadonlyArray<Column<Provider>> = [
  ['id', (p) => p.id],
  ['name', (p) => p.name],
  ['kind', (p) => p.kind],
  ['base url', (p) => p.baseUrl],
];

export function providersCommand(program: Command, context: Context): void {
  const providers = program.command('providers').description('model providers (models are named <provider name>/<model id>)');

  pageOptions(providers.command('list').description('list model providers')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/model-providers', { params: { query: pageQuery(options) } }));
    printPage(context, page, COLUMNS, options, 'providers list');
  });

  providers
    .command('create <name>')
    .description('register a model provider (its key is stored sealed and never shown again)')
    .requiredOption('--base-url <url>', 'e.g. https://api.openai.com/v1')
    .option('--kind <kind>', `one of ${KINDS.join(', ')}`, 'openai-compatible')
    .option('--provider-key <key>', "the provider's API key")
    .option('--provider-key-ref <vaultItemId:field>', 'the API key as a Vault reference instead (opened only at each model call)')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: { baseUrl: string; kind: string; providerKey?: string; providerKeyRef?: string; json?: boolean }) => {
      if (!KINDS.includes(options.kind as Provider['kind'])) throw new UsageError(`--kind must be one of ${KINDS.join(', ')}`);
      if (options.providerKey !== undefined && options.providerKeyRef !== undefined) throw new UsageError('give --provider-key or --provider-key-ref, not both');
      const at = options.providerKeyRef?.indexOf(':') ?? -1;
      if (options.providerKeyRef !== undefined && at <= 0) throw new UsageError('--provider-key-ref takes <vaultItemId>:<field>');
      const apiKey =
        options.providerKeyRef !== undefined
          ? { apiKey: { vaultItemId: options.providerKeyRef.slice(0, at), field: options.providerKeyRef.slice(at + 1) } }
          : options.providerKey !== undefined
            ? { apiKey: options.providerKey }
            : {};
      const client = await connect(context);
      const provider = await unwrap(client.POST('/v1/model-providers', { body: { name, kind: options.kind as Provider['kind'], baseUrl: options.baseUrl, ...apiKey } }));
      context.io.out(options.json ? formatJson(provider) : formatFields([['id', provider.id], ['name', provider.name], ['kind', provider.kind], ['base url', provider.baseUrl]]));
    });
}
