import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, formatTable, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';
import { plain } from '../context/plain-calls';

interface Price {
  id: string;
  model: string;
  inputPerMillionMicros: number;
  outputPerMillionMicros: number;
  cachedInputPerMillionMicros: number;
  effectiveFrom: string;
  /** Listed versions only: the one a call starting now is priced at. */
  inForce?: boolean;
}
interface Budget {
  id: string;
  scope: { kind: string; id: string | null };
  period: string;
  limitMicros: number | null;
  limitTokens: number | null;
  spentMicros: number | null;
  reservedMicros: number | null;
  spentTokens: number | null;
  reservedTokens: number | null;
}
interface SummaryRow {
  key: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  unknownCalls: number;
}
interface Page<T> {
  data: T[];
  next: string | null;
}

/** Micros as money with six decimals: 1500000 → 1.500000 (no floats: integer division). */
export function money(micros: number | null): string {
  if (micros === null) return '-';
  const sign = micros < 0 ? '-' : '';
  const abs = BigInt(Math.abs(micros));
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`;
}

/** An integer option: `--input 1.5` is a usage error here, not a 400 later. */
function integerOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`${name} must be an integer, not "${value}"`);
  return Number(value);
}

const PRICE_COLUMNS: ReadonlyArray<Column<Price>> = [
  ['id', (p) => p.id],
  ['model', (p) => p.model],
  ['input/M', (p) => money(p.inputPerMillionMicros)],
  ['cached/M', (p) => money(p.cachedInputPerMillionMicros)],
  ['output/M', (p) => money(p.outputPerMillionMicros)],
  ['effective from', (p) => p.effectiveFrom],
  ['in force', (p) => (p.inForce === true ? 'yes' : '')],
];

const BUDGET_COLUMNS: ReadonlyArray<Column<Budget>> = [
  ['id', (b) => b.id],
  ['scope', (b) => (b.scope.id === null ? b.scope.kind : `${b.scope.kind}:${b.scope.id}`)],
  ['period', (b) => b.period],
  ['limit', (b) => (b.limitMicros !== null ? money(b.limitMicros) : `${b.limitTokens} tokens`)],
  ['spent', (b) => (b.limitMicros !== null ? money(b.spentMicros) : `${b.spentTokens} tokens`)],
  ['reserved', (b) => (b.limitMicros !== null ? money(b.reservedMicros) : `${b.reservedTokens} tokens`)],
];

const SUMMARY_COLUMNS: ReadonlyArray<Column<SummaryRow>> = [
  ['key', (r) => r.key],
  ['calls', (r) => r.calls],
  ['input tokens', (r) => r.inputTokens],
  ['output tokens', (r) => r.outputTokens],
  ['cost', (r) => money(r.costMicros)],
  ['unknown', (r) => r.unknownCalls],
];

export function billingCommands(program: Command, context: Context): void {
  program
    .command('usage')
    .description('usage and cost, grouped by model, bot, member or day (default: the last 30 days)')
    .option('--group-by <group>', 'model, bot, member or day', 'model')
    .option('--from <time>', 'ISO 8601 time (inclusive)')
    .option('--to <time>', 'ISO 8601 time (exclusive)')
    .option('--json', 'print the summary as JSON')
    .action(async (options: { groupBy: string; from?: string; to?: string; json?: boolean }) => {
      const client = await connect(context);
      const query = { groupBy: options.groupBy, ...(options.from ? { from: options.from } : {}), ...(options.to ? { to: options.to } : {}) };
      const summary = await unwrap(plain(client).GET<{ data: SummaryRow[] }>('/v1/usage/summary', { params: { query } }));
      if (options.json) return context.io.out(formatJson(summary));
      context.io.out(summary.data.length === 0 ? '(none)\n' : formatTable(summary.data, SUMMARY_COLUMNS));
    });

  program
    .command('credits')
    .description("the organization's credits: balance (the ledger's sum) and what calls in flight hold")
    .option('--json', 'print the credits as JSON')
    .action(async (options: { json?: boolean }) => {
      const client = await connect(context);
      const credits = await unwrap(plain(client).GET<{ balanceMicros: number; reservedMicros: number }>('/v1/credits'));
      if (options.json) return context.io.out(formatJson(credits));
      context.io.out(formatFields([['balance', money(credits.balanceMicros)], ['reserved', money(credits.reservedMicros)], ['available', money(credits.balanceMicros - credits.reservedMicros)]]));
    });

  const prices = program.command('prices').description('model prices in micros per million tokens (1 unit = 1,000,000 micros)');
  pageOptions(prices.command('list').description('list price versions')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(plain(client).GET<Page<Price>>('/v1/prices', { params: { query: pageQuery(options) } }));
    printPage(context, page, PRICE_COLUMNS, options, 'prices list');
  });
  prices
    .command('set <model>')
    .description('add a price version for <provider name>/<model id>; it prices calls that start from --from on')
    .requiredOption('--input <micros>', 'micros per million input tokens')
    .requiredOption('--output <micros>', 'micros per million output tokens')
    .option('--cached-input <micros>', 'micros per million cached input tokens (default: the input price)')
    .option('--from <time>', 'ISO 8601 time it takes effect (default: now)')
    .option('--json', 'print the result as JSON')
    .action(async (model: string, options: { input: string; output: string; cachedInput?: string; from?: string; json?: boolean }) => {
      const cached = integerOption('--cached-input', options.cachedInput);
      const body = {
        inputPerMillionMicros: integerOption('--input', options.input),
        outputPerMillionMicros: integerOption('--output', options.output),
        ...(cached !== undefined ? { cachedInputPerMillionMicros: cached } : {}),
        ...(options.from !== undefined ? { effectiveFrom: options.from } : {}),
      };
      const client = await connect(context);
      const price = await unwrap(plain(client).PUT<Price>(`/v1/prices/${encodeURIComponent(model)}`, { body }));
      context.io.out(options.json ? formatJson(price) : formatTable([price], PRICE_COLUMNS));
    });

  const budgets = program.command('budgets').description('budgets (money) and quotas (tokens) of the organization, a bot or a member');
  pageOptions(budgets.command('list').description('list budgets with their current period')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(plain(client).GET<Page<Budget>>('/v1/budgets', { params: { query: pageQuery(options) } }));
    printPage(context, page, BUDGET_COLUMNS, options, 'budgets list');
  });
  budgets
    .command('create')
    .description('create a budget: exactly one of --limit-micros and --limit-tokens')
    .option('--bot <id>', 'a bot budget')
    .option('--member <id>', 'a member budget')
    .option('--period <period>', 'day, month or total', 'month')
    .option('--limit-micros <micros>', 'a money budget')
    .option('--limit-tokens <tokens>', 'a token quota (input plus output)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { bot?: string; member?: string; period: string; limitMicros?: string; limitTokens?: string; json?: boolean }) => {
      if (options.bot !== undefined && options.member !== undefined) throw new UsageError('give --bot or --member, not both');
      const scope = options.bot !== undefined ? { kind: 'bot', id: options.bot } : options.member !== undefined ? { kind: 'member', id: options.member } : { kind: 'organization' };
      const limitMicros = integerOption('--limit-micros', options.limitMicros);
      const limitTokens = integerOption('--limit-tokens', options.limitTokens);
      const body = { scope, period: options.period, ...(limitMicros !== undefined ? { limitMicros } : {}), ...(limitTokens !== undefined ? { limitTokens } : {}) };
      const client = await connect(context);
      const budget = await unwrap(plain(client).POST<Budget>('/v1/budgets', { body }));
      context.io.out(options.json ? formatJson(budget) : formatTable([budget], BUDGET_COLUMNS));
    });
  budgets
    .command('delete <id>')
    .description('delete a budget')
    .option('--json', 'print the deleted budget as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const budget = await unwrap(plain(client).DELETE<Budget>(`/v1/budgets/${encodeURIComponent(id)}`));
      context.io.out(options.json ? formatJson(budget) : `deleted ${budget.id}\n`);
    });
}
