import { unwrap, type StreamItem } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context';
import { UsageError } from '../exit-codes';
import { formatFields, formatJson } from '../output';
import { followExecution } from './follow';

export function executionsCommand(program: Command, context: Context): void {
  const executions = program.command('executions').description('durable executions (a Turn is one)');

  executions
    .command('get <id>')
    .description('show an execution: state, generation, resource')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const execution = await unwrap(client.GET('/v1/executions/{id}', { params: { path: { id } } }));
      if (options.json) return context.io.out(formatJson(execution));
      context.io.out(
        formatFields([
          ['id', execution.id],
          ['kind', execution.kind],
          ['state', execution.state],
          ['generation', execution.generation],
          ['resource', execution.resource === null ? null : `${execution.resource.type} ${execution.resource.id}`],
          ['category', execution.category],
          ['errorId', execution.errorId],
        ]),
      );
    });

  executions
    .command('watch <id>')
    .description('print the events as they happen until the execution ends (exit 4 unless it completed)')
    .option('--after <seq>', 'start after this sequence number')
    .option('--json', 'print every event as one JSON line')
    .action(async (id: string, options: { after?: string; json?: boolean }) => {
      if (options.after !== undefined && !/^\d+$/.test(options.after)) throw new UsageError('--after must be a sequence number');
      const client = await connect(context);
      await followExecution(client, id, (item) => context.io.out(options.json ? `${JSON.stringify(item)}\n` : `${describe(item)}\n`), {
        ...(options.after !== undefined ? { after: Number(options.after) } : {}),
      });
    });
}

/** `   3  text.delta  step=1 attempt=1 text="Hel"`: the sequence number, the type, then its own fields. */
function describe(item: StreamItem): string {
  if (item.seq === null) return `   !  error  category=${item.error.category} errorId=${item.error.errorId} (resuming)`;
  const { seq, type, at: _at, ...fields } = item;
  const details = Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'number' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${String(seq).padStart(4)}  ${type}${details === '' ? '' : `  ${details}`}`;
}
