import { unwrap, type Schemas } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { formatJson, formatTable, type Column } from '../context/output';

type Limits = Schemas['OrganizationLimitsBody'];
type Row = { readonly name: string; readonly limit: number; readonly used: number | null };

const COLUMNS: ReadonlyArray<Column<Row>> = [
  ['limit', (r) => r.name],
  ['allowed', (r) => r.limit],
  ['used', (r) => r.used],
];

/** `openbot limits`: the organization's limits (decision 076) and its use of them, from `GET /v1/limits`. */
export function limitsCommand(program: Command, context: Context): void {
  program
    .command('limits')
    .description("your organization's limits and how much of each it uses now")
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const client = await connect(context);
      const limits: Limits = await unwrap(client.GET('/v1/limits'));
      if (options.json) return context.io.out(formatJson(limits));
      const rows = Object.entries(limits).map(([name, standing]) => ({ name, limit: standing.limit, used: standing.used }));
      context.io.out(formatTable(rows, COLUMNS));
    });
}
