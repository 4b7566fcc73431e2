import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';
import { plain } from '../context/plain-calls';

/** A memory item as the API answers it (content only when read one by one). */
interface Memory {
  readonly id: string;
  readonly botId: string;
  readonly tags: readonly string[];
  readonly access: { readonly kind: string; readonly ids?: readonly string[]; readonly roles?: readonly string[] };
  readonly sources: ReadonlyArray<{ readonly type: string; readonly id: string }>;
  readonly status: string;
  readonly createdAt: string;
  readonly content?: string;
}

const COLUMNS: ReadonlyArray<Column<Memory>> = [
  ['id', (m) => m.id],
  ['status', (m) => m.status],
  ['tags', (m) => m.tags.join(',')],
  ['access', (m) => accessText(m.access)],
  ['created', (m) => m.createdAt],
];

const ITEMS = '/v1/bots/{id}/memories';
const ITEM = '/v1/bots/{id}/memories/{memoryId}';
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `openbot memories list|get|add|tag|archive|restore|delete --bot <id>`: a Bot's memory items, one at a time. */
export function memoriesCommand(program: Command, context: Context): void {
  const memories = program.command('memories').description("a Bot's memory items: sealed content, tags, access rules and sources");

  pageOptions(
    memories
      .command('list')
      .description('list items without content, oldest first')
      .requiredOption('--bot <id>', 'the Bot')
      .option('--tag <tag>', 'only items with this tag (repeat for several: all of them)', collect)
      .option('-q, --query <words>', 'only items whose content has every one of these whole words'),
  ).action(async (options: PageOptions & { bot: string; tag?: string[]; query?: string }) => {
    const query = { ...pageQuery(options), ...(options.tag !== undefined ? { tag: options.tag } : {}), ...(options.query !== undefined ? { q: options.query } : {}) };
    const client = await connect(context);
    const page = await unwrap<{ data: Memory[]; next: string | null }>(plain(client).GET(ITEMS, { params: { path: { id: options.bot }, query } }) as never);
    printPage(context, page, COLUMNS, options, 'memories list');
  });

  memories
    .command('get <memoryId>')
    .description('read one item with its content')
    .requiredOption('--bot <id>', 'the Bot')
    .option('--json', 'print the item as JSON')
    .action(async (memoryId: string, options: { bot: string; json?: boolean }) => {
      const client = await connect(context);
      const item = await unwrap<Memory>(plain(client).GET(ITEM, { params: { path: { id: options.bot, memoryId } } }) as never);
      context.io.out(options.json ? formatJson(item) : describe(item));
    });

  memories
    .command('add <content>')
    .description('add an item')
    .requiredOption('--bot <id>', 'the Bot')
    .option('--tag <tag>', 'a tag (repeat for several)', collect)
    .option('--member <id>', 'only Turns of this member select it (repeat for several)', collect)
    .option('--role <role>', 'only Turns of members with this role select it (repeat for several)', collect)
    .option('--source <type:id>', 'where it came from: chat:<id>, turn:<id>, file:<id> or url:<url> (repeat for several)', collect)
    .option('--json', 'print the item as JSON')
    .action(async (content: string, options: { bot: string; tag?: string[]; member?: string[]; role?: string[]; source?: string[]; json?: boolean }) => {
      if (options.member !== undefined && options.role !== undefined) throw new UsageError('use --member or --role, not both');
      const access = options.member !== undefined ? { kind: 'members', ids: options.member } : options.role !== undefined ? { kind: 'roles', roles: options.role } : { kind: 'bot' };
      const sources = (options.source ?? []).map(parseSource);
      const client = await connect(context);
      const body = { content, tags: options.tag ?? [], access, sources };
      const item = await unwrap<Memory>(plain(client).POST(ITEMS, { params: { path: { id: options.bot } }, body }) as never);
      context.io.out(options.json ? formatJson(item) : describe(item));
    });

  const change = (name: string, description: string, body: (args: { tags?: string[] }) => Record<string, unknown>, withTags: boolean) => {
    const command = memories.command(`${name} <memoryId>`).description(description).requiredOption('--bot <id>', 'the Bot').option('--json', 'print the item as JSON');
    if (withTags) command.requiredOption('--tag <tag>', 'a tag (repeat for several); replaces all tags', collect);
    command.action(async (memoryId: string, options: { bot: string; tag?: string[]; json?: boolean }) => {
      const client = await connect(context);
      const item = await unwrap<Memory>(plain(client).PATCH(ITEM, { params: { path: { id: options.bot, memoryId } }, body: body({ ...(options.tag ? { tags: options.tag } : {}) }) }) as never);
      context.io.out(options.json ? formatJson(item) : describe(item));
    });
  };
  change('tag', "replace an item's tags (its content is not touched)", (args) => ({ tags: args.tags }), true);
  change('archive', 'archive an item: it is never selected', () => ({ status: 'archived' }), false);
  change('restore', 'make an archived item active again', () => ({ status: 'active' }), false);

  memories
    .command('delete <memoryId>')
    .description('delete an item')
    .requiredOption('--bot <id>', 'the Bot')
    .action(async (memoryId: string, options: { bot: string }) => {
      const client = await connect(context);
      const item = await unwrap<Memory>(plain(client).DELETE(ITEM, { params: { path: { id: options.bot, memoryId } } }) as never);
      context.io.out(`deleted ${item.id}\n`);
    });
}

function parseSource(value: string): { type: string; id: string } {
  const colon = value.indexOf(':');
  if (colon <= 0) throw new UsageError(`--source must be <type>:<id>, got "${value}"`);
  return { type: value.slice(0, colon), id: value.slice(colon + 1) };
}

function accessText(access: Memory['access']): string {
  if (access.kind === 'members') return `members ${(access.ids ?? []).join(',')}`;
  if (access.kind === 'roles') return `roles ${(access.roles ?? []).join(',')}`;
  return 'bot';
}

function describe(m: Memory): string {
  return formatFields([
    ['id', m.id],
    ['status', m.status],
    ['tags', m.tags.join(', ')],
    ['access', accessText(m.access)],
    ['sources', m.sources.map((s) => `${s.type}:${s.id}`).join(', ')],
    ...(m.content !== undefined ? ([['content', m.content]] as Array<[string, string]>) : []),
  ]);
}
