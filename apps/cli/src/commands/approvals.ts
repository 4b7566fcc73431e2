import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

/** An Approval as the API answers it (GET /v1/approvals/{id}). */
export interface Approval {
  readonly id: string;
  readonly executionId: string;
  readonly chatId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: string;
  readonly state: string;
  readonly requestedAt: string;
  readonly expiresAt: string | null;
  readonly decidedAt: string | null;
  readonly decidedBy: { readonly kind: string; readonly id: string } | null;
  readonly reason: string | null;
}

const COLUMNS: ReadonlyArray<Column<Approval>> = [
  ['id', (a) => a.id],
  ['state', (a) => a.state],
  ['tool', (a) => a.toolName],
  ['arguments', (a) => a.arguments],
  ['chat', (a) => a.chatId],
  ['requested', (a) => a.requestedAt],
];

const STATES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
type State = (typeof STATES)[number];
const isState = (value: string): value is State => (STATES as readonly string[]).includes(value);

export function approvalsCommand(program: Command, context: Context): void {
  const approvals = program.command('approvals').description('tool calls waiting for (or given) a person\'s decision');

  pageOptions(
    approvals
      .command('list')
      .description('list the approvals you may decide (your inbox), newest first')
      .option('--state <state>', `only this state: ${STATES.join(', ')}`)
      .option('--chat <id>', 'only this Chat')
      .option('--execution <id>', 'only this execution'),
  ).action(async (options: PageOptions & { state?: string; chat?: string; execution?: string }) => {
    if (options.state !== undefined && !isState(options.state)) throw new UsageError(`--state must be one of ${STATES.join(', ')}`);
    const query = {
      ...pageQuery(options),
      ...(options.state !== undefined && isState(options.state) ? { state: options.state } : {}),
      ...(options.chat !== undefined ? { chatId: options.chat } : {}),
      ...(options.execution !== undefined ? { executionId: options.execution } : {}),
    };
    const client = await connect(context);
    const page: { data: Approval[]; next: string | null } = await unwrap(client.GET('/v1/approvals', { params: { query } }));
    printPage(context, page, COLUMNS, options, 'approvals list');
  });

  for (const decision of ['approve', 'deny'] as const) {
    approvals
      .command(`${decision} <id>`)
      .description(decision === 'approve' ? 'approve a pending tool call: it runs once, with its saved arguments' : 'deny a pending tool call: the model is told, with the reason')
      .option('--reason <text>', 'why (a denial gives it to the model)')
      .option('--json', 'print the result as JSON')
      .action(async (id: string, options: { reason?: string; json?: boolean }) => {
        const client = await connect(context);
        const body = { decision, ...(options.reason !== undefined ? { reason: options.reason } : {}) };
        const approval: Approval = await unwrap(client.POST('/v1/approvals/{id}/decision', { params: { path: { id } }, body }));
        context.io.out(options.json ? formatJson(approval) : describe(approval));
      });
  }
}

function describe(a: Approval): string {
  return formatFields([
    ['id', a.id],
    ['state', a.state],
    ['tool', a.toolName],
    ['arguments', a.arguments],
    ['execution', a.executionId],
    ['decidedBy', a.decidedBy === null ? null : `${a.decidedBy.kind} ${a.decidedBy.id}`],
    ['reason', a.reason],
  ]);
}
