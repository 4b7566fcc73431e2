import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

interface StuckRow {
  readonly id: string;
  readonly kind: string;
  readonly state: string;
  readonly organizationId: string | null;
  readonly ownerNode: string | null;
  readonly leased: boolean;
  readonly ageSeconds: number;
}

const STUCK_COLUMNS: ReadonlyArray<Column<StuckRow>> = [
  ['id', (r) => r.id],
  ['state', (r) => r.state],
  ['kind', (r) => r.kind],
  ['age', (r) => `${r.ageSeconds}s`],
  ['owner', (r) => r.ownerNode ?? '-'],
  ['lease', (r) => (r.leased ? 'live' : 'none')],
  ['organization', (r) => r.organizationId ?? '(platform)'],
];

/** The platform administrator's operations commands: the stuck-work view and its two actions. */
export function adminCommand(program: Command, context: Context): void {
  const admin = program.command('admin').description('operate the platform (platform administrator token)');
  const tokenOf = (options: { adminToken?: string }): string => {
    const token = options.adminToken ?? context.env.OPENBOT_ADMIN_TOKEN;
    if (!token) throw new UsageError('give --admin-token <token> (or set OPENBOT_ADMIN_TOKEN)');
    return token;
  };
  const withToken = (command: Command): Command => command.option('--admin-token <token>', 'the platform administrator token (default: $OPENBOT_ADMIN_TOKEN)');

  withToken(
    pageOptions(
      admin
        .command('stuck')
        .description('list executions waiting, in outcome_unknown or cancelling for longer than a threshold, oldest first')
        .option('--older-than <seconds>', 'unsettled for at least this long (default 300)')
        .option('--state <state>', 'only waiting, outcome_unknown or cancelling (comma-separate several)'),
    ),
  ).action(async (options: PageOptions & { olderThan?: string; state?: string; adminToken?: string }) => {
    if (options.olderThan !== undefined && !/^\d+$/.test(options.olderThan)) throw new UsageError('--older-than must be whole seconds');
    const headers = { authorization: `Bearer ${tokenOf(options)}` };
    const client = await connect(context, { keyless: true });
    const query = { ...pageQuery(options), ...(options.olderThan !== undefined ? { olderThan: Number(options.olderThan) } : {}), ...(options.state !== undefined ? { state: options.state } : {}) };
    const page = await unwrap(client.GET('/v1/platform/executions/stuck', { params: { query: query as never }, headers }));
    printPage(context, page as { data: StuckRow[]; next: string | null }, STUCK_COLUMNS, options, 'admin stuck');
  });

  withToken(admin.command('cancel <id>').description("cancel any organization's execution (recorded in its audit log)").option('--json', 'print the result as JSON')).action(
    async (id: string, options: { adminToken?: string; json?: boolean }) => {
      const client = await connect(context, { keyless: true });
      const answer = await unwrap(client.POST('/v1/platform/executions/{id}/cancel', { params: { path: { id } }, headers: { authorization: `Bearer ${tokenOf(options)}` } }));
      context.io.out(options.json ? formatJson(answer) : formatFields([['id', answer.id], ['state', answer.state]]));
    },
  );

  withToken(
    admin
      .command('decide <id> <decision>')
      .description('resolve an execution in outcome_unknown: succeeded (with --result), failed or stop (recorded in its audit log)')
      .option('--result <json>', 'with succeeded: the lost call’s result, a JSON object')
      .option('--json', 'print the result as JSON'),
  ).action(async (id: string, decision: string, options: { adminToken?: string; result?: string; json?: boolean }) => {
    if (!['succeeded', 'failed', 'stop'].includes(decision)) throw new UsageError('the decision is succeeded, failed or stop');
    let result: Record<string, unknown> | undefined;
    if (options.result !== undefined) {
      try {
        result = JSON.parse(options.result) as Record<string, unknown>;
      } catch {
        throw new UsageError('--result must be a JSON object');
      }
      if (result === null || typeof result !== 'object' || Array.isArray(result)) throw new UsageError('--result must be a JSON object');
    }
    const client = await connect(context, { keyless: true });
    const answer = await unwrap(
      client.POST('/v1/platform/executions/{id}/decision', {
        params: { path: { id } },
        body: { decision: decision as 'succeeded' | 'failed' | 'stop', ...(result !== undefined ? { result } : {}) },
        headers: { authorization: `Bearer ${tokenOf(options)}` },
      }),
    );
    context.io.out(options.json ? formatJson(answer) : formatFields([['id', answer.id], ['state', answer.state]]));
  });
}
