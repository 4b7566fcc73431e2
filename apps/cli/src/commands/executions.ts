import { unwrap, type StreamItem } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { formatProviderAnswer, UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';
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
          ['provider', execution.detail === undefined ? undefined : formatProviderAnswer(execution.detail)],
          ['errorId', execution.errorId],
        ]),
      );
    });

  for (const action of ['pause', 'resume'] as const) {
    executions
      .command(`${action} <id>`)
      .description(action === 'pause' ? 'pause an execution and its attached tasks (no new sends; its time stops counting)' : 'resume a paused execution and its attached tasks')
      .option('--json', 'print the result as JSON')
      .action(async (id: string, options: { json?: boolean }) => {
        const client = await connect(context);
        const answer = await unwrap(action === 'pause' ? client.POST('/v1/executions/{id}/pause', { params: { path: { id } } }) : client.POST('/v1/executions/{id}/resume', { params: { path: { id } } }));
        context.io.out(options.json ? formatJson(answer) : formatFields([['id', answer.id], ['state', answer.state], ['paused', answer.paused]]));
      });
  }

  pageOptions(executions.command('children <id>').description('list the executions it started (its tasks)')).action(async (id: string, options: PageOptions) => {
    const client = await connect(context);
    const page: { data: Child[]; next: string | null } = await unwrap(client.GET('/v1/executions/{id}/children', { params: { path: { id }, query: pageQuery(options) } }));
    printPage(context, page, CHILD_COLUMNS, options, `executions children ${id}`);
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

interface Child {
  readonly id: string;
  readonly kind: string;
  readonly state: string;
  readonly attached: boolean;
  readonly resource: { readonly type: string; readonly id: string } | null;
}

const CHILD_COLUMNS: ReadonlyArray<Column<Child>> = [
  ['id', (c) => c.id],
  ['kind', (c) => c.kind],
  ['state', (c) => c.state],
  ['attached', (c) => c.attached],
  ['resource', (c) => (c.resource === null ? null : `${c.resource.type} ${c.resource.id}`)],
];

/** `   3  text.delta  step=1 attempt=1 text="Hel"`: the sequence number, the type, then its own fields. */
function describe(item: StreamItem): string {
  if (item.seq === null) return `   !  error  category=${item.error.category} errorId=${item.error.errorId} (resuming)`;
  const { seq, type, at: _at, ...fields } = item;
  // Fields an event carries as null (e.g. `stop` of an answer that hit no limit) say nothing here.
  const details = Object.entries(fields)
    .filter(([, value]) => value !== null)
    .map(([key, value]) => `${key}=${typeof value === 'number' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `${String(seq).padStart(4)}  ${type}${details === '' ? '' : `  ${details}`}`;
}
