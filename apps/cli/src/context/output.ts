/** Where a command writes: stdout for results, stderr for notes and errors. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal (live rewriting allowed). */
  readonly interactive: boolean;
  /** Terminal width when interactive. */
  readonly columns: number;
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  get interactive() {
    return process.stdout.isTTY === true;
  },
  get columns() {
    return process.stdout.columns ?? 80;
  },
};

export type Column<T> = readonly [header: string, cell: (row: T) => unknown];

/** A plain text table: a header row, then one line per row, columns padded to fit. */
export function formatTable<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>): string {
  const cells = rows.map((row) => columns.map(([, cell]) => text(cell(row))));
  const headers = columns.map(([header]) => header.toUpperCase());
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: readonly string[]): string =>
    values
      .map((value, i) => (i === values.length - 1 ? value : value.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...cells.map(line)].join('\n')}\n`;
}

/** `label: value` lines, labels aligned; undefined values are left out. */
export function formatFields(fields: ReadonlyArray<readonly [label: string, value: unknown]>): string {
  const shown = fields.filter(([, value]) => value !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length));
  return shown.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${text(value)}`.trimEnd()).join('\n') + '\n';
}

export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(text).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
