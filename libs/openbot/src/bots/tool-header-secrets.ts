import { InvalidInput, type InputIssue, type SealedRecordId } from '@openbot/domain';
import type { Sql } from '../database/sql';
import type { SealedRecords } from '../sealing/sealed-records';
import type { BotTool } from './bot-view';

/** Sealed-record purpose of a tool's literal header values (decision 036). */
export const TOOL_HEADERS_PURPOSE = 'bot-tool.headers';

/**
 * Seals the literal header values of the tools being saved (decision 036). Each tool with
 * literals keeps them in one sealed record named by its `headerSecrets`; the stored (and
 * answered) value of such a header is `null`. A `null` given back keeps that header's value from
 * the tool of the same name as saved before (400 on the header when there is none). A tool whose
 * values are unchanged keeps its record, so a running Turn that saved it still sends them; the
 * records no tool keeps are answered as `obsolete`, for the caller to delete in its transaction.
 */
export async function sealToolHeaders(
  tx: Sql,
  sealed: SealedRecords,
  tools: readonly BotTool[],
  previous: readonly BotTool[],
): Promise<{ readonly tools: BotTool[]; readonly obsolete: string[] }> {
  const issues: InputIssue[] = [];
  const kept = new Set<string>();
  const out: BotTool[] = [];
  for (const [index, tool] of tools.entries()) {
    const { headerSecrets: _given, ...rest } = tool;
    const headers = tool.headers;
    const literals = Object.entries(headers ?? {}).filter(([, value]) => value === null || typeof value === 'string');
    if (headers === undefined || literals.length === 0) {
      out.push(rest);
      continue;
    }
    const before = previous.find((p) => p.name === tool.name && p.headerSecrets !== undefined);
    const saved = before === undefined ? {} : await readLiterals(sealed, before.headerSecrets!);
    const values: Record<string, string> = {};
    for (const [name, value] of literals) {
      if (typeof value === 'string') values[name] = value;
      else if (saved[name] !== undefined) values[name] = saved[name];
      else issues.push({ path: `tools.${index}.headers.${name}`, message: 'null keeps a saved value, and this tool has none for this header: give the value' });
    }
    const same = before !== undefined && sameValues(values, saved);
    const record = same ? before.headerSecrets! : await sealed.put(TOOL_HEADERS_PURPOSE, values, tx);
    kept.add(record);
    const stored = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, typeof value === 'string' ? null : value]));
    out.push({ ...rest, headers: stored, headerSecrets: record });
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  const obsolete = previous.flatMap((p) => (p.headerSecrets !== undefined && !kept.has(p.headerSecrets) ? [p.headerSecrets] : []));
  return { tools: out, obsolete };
}

/** The records of a Bot's tools (deleted with the Bot). */
export function headerSecretRecords(tools: readonly BotTool[]): string[] {
  return tools.flatMap((tool) => (tool.headerSecrets === undefined ? [] : [tool.headerSecrets]));
}

/** A tool's literal header values, opened; empty when the record is gone or not one of ours. */
export async function readLiterals(sealed: SealedRecords, recordId: string): Promise<Readonly<Record<string, string>>> {
  const record = await sealed.get(recordId as SealedRecordId);
  if (record === null || record.purpose !== TOOL_HEADERS_PURPOSE || record.value === null || typeof record.value !== 'object') return {};
  return Object.fromEntries(Object.entries(record.value as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function sameValues(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}
