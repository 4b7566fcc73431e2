import type { Command } from 'commander';
import { parseLimit, type Context } from '../context/context';
import { formatJson, formatTable, type Column } from '../context/output';

export interface PageOptions {
  readonly after?: string;
  readonly limit?: string;
  readonly json?: boolean;
}

/** `--after`, `--limit` and `--json` on a list command. */
export function pageOptions(command: Command): Command {
  return command
    .option('--after <cursor>', 'continue after this cursor (printed at the end of the previous page)')
    .option('--limit <n>', 'at most this many rows')
    .option('--json', 'print the page as JSON ({ data, next })');
}

export function pageQuery(options: PageOptions): { after?: string; limit?: number } {
  const limit = parseLimit(options.limit);
  return { ...(options.after !== undefined ? { after: options.after } : {}), ...(limit !== undefined ? { limit } : {}) };
}

/** One page as a table (and where the next one starts, on stderr) or as the API's JSON. */
export function printPage<T>(context: Context, page: { data: readonly T[]; next: string | null }, columns: ReadonlyArray<Column<T>>, options: PageOptions, command: string): void {
  if (options.json) return context.io.out(formatJson(page));
  context.io.out(page.data.length === 0 ? '(none)\n' : formatTable(page.data, columns));
  if (page.next !== null) context.io.err(`more: openbot ${command} --after ${page.next}\n`);
}
