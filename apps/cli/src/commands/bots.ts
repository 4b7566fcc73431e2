import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Bot = Schemas['BotBody'];
type CreateBot = Schemas['CreateBotRequest'];

const COLUMNS: ReadonlyArray<Column<Bot>> = [
  ['id', (b) => b.id],
  ['name', (b) => b.name],
  ['model', (b) => b.model],
  ['tools', (b) => b.tools.flatMap(toolNames)],
  ['updated', (b) => b.updatedAt],
];

export function botsCommand(program: Command, context: Context): void {
  const bots = program.command('bots').description('Bots: a model, instructions, tools and limits');

  pageOptions(bots.command('list').description('list Bots')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/bots', { params: { query: pageQuery(options) } }));
    printPage(context, page, COLUMNS, options, 'bots list');
  });

  bots
    .command('create <name>')
    .description('create a Bot')
    .requiredOption('--model <model>', '<provider name>/<model id>, e.g. local/gpt-4o-mini')
    .option('--instructions <text>', 'the system instructions')
    .option('--tools <json>', 'the tools, as the JSON array the API takes')
    .option('--limits <json>', 'the Turn limits, as the JSON object the API takes ({ maxSteps, maxSeconds, maxOutputTokens })')
    .option('--json', 'print the result as JSON')
    .action(async (name: string, options: { model: string; instructions?: string; tools?: string; limits?: string; json?: boolean }) => {
      const body: CreateBot = {
        name,
        model: options.model,
        ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
        ...(options.tools !== undefined ? { tools: parseJson(options.tools, '--tools') as CreateBot['tools'] } : {}),
        ...(options.limits !== undefined ? { limits: parseJson(options.limits, '--limits') as CreateBot['limits'] } : {}),
      };
      const client = await connect(context);
      const bot = await unwrap(client.POST('/v1/bots', { body }));
      context.io.out(options.json ? formatJson(bot) : describe(bot));
    });

  bots
    .command('get <id>')
    .description('show one Bot')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const bot = await unwrap(client.GET('/v1/bots/{id}', { params: { path: { id } } }));
      context.io.out(options.json ? formatJson(bot) : describe(bot));
    });
}

function describe(bot: Bot): string {
  return formatFields([
    ['id', bot.id],
    ['name', bot.name],
    ['model', bot.model],
    ['instructions', bot.instructions === '' ? undefined : bot.instructions],
    ['tools', bot.tools.flatMap((t) => toolNames(t).map((name) => `${name} (${t.kind})`))],
    ['limits', `${bot.limits.maxSteps} steps, ${bot.limits.maxSeconds} s, ${bot.limits.maxOutputTokens} output tokens`],
    ['created', bot.createdAt],
    ['updated', bot.updatedAt],
  ]);
}

/** The names the model sees: an `app` entry stands for the tools of its declarations. */
function toolNames(tool: Bot['tools'][number]): string[] {
  return tool.kind === 'app' ? (tool.declarations ?? []).map((d) => d.name) : [tool.name ?? ''];
}

function parseJson(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${option} must be JSON`);
  }
}
