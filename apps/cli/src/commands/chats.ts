import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Chat = Schemas['ChatBody'];

const COLUMNS: ReadonlyArray<Column<Chat>> = [
  ['id', (c) => c.id],
  ['bot', (c) => c.botId],
  ['created', (c) => c.createdAt],
];

export function chatsCommand(program: Command, context: Context): void {
  const chats = program.command('chats').description('Chats with a Bot (talk in one with `openbot chat <chatId> "<message>"`)');

  pageOptions(chats.command('list').description('list Chats').option('--bot <botId>', "only this Bot's Chats")).action(async (options: PageOptions & { bot?: string }) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/chats', { params: { query: { ...pageQuery(options), ...(options.bot !== undefined ? { botId: options.bot } : {}) } } }));
    printPage(context, page, COLUMNS, options, 'chats list');
  });

  chats
    .command('create')
    .description('open a Chat with a Bot')
    .requiredOption('--bot <botId>', 'the Bot to talk to')
    .option('--json', 'print the result as JSON')
    .action(async (options: { bot: string; json?: boolean }) => {
      const client = await connect(context);
      const chat = await unwrap(client.POST('/v1/chats', { body: { botId: options.bot } }));
      context.io.out(options.json ? formatJson(chat) : formatFields([['id', chat.id], ['bot', chat.botId], ['created', chat.createdAt]]));
    });
}
