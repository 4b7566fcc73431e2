import { InvalidInput, type InputIssue } from '@openbot/domain';
import type { Sql } from '../../../platform/src/database/sql';
import type { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import type { BotTool } from './bot-view';

/**
 * Sealed-record purpose of a tool's literal header values as decision 036 sealed them, bound to
 * no origin. Such a record is opened once more, for the first origin that asks, and sealed again
 * in place bound to it (decision 068).
 */
export const TOOL_HEADERS_PURPOSE = 'bot-tool.headers';

/**
 * The purpose of a tool's literal header values since decision 068: bound to the origin of the
 * URL they are sent to. The purpose is part of the record's associated data, so the record opens
 * only for that origin.
 */
export function toolHeadersPurpose(origin: string): string {
  return `${TOOL_HEADERS_PURPOSE}:${origin}`;
}

/** The origin (scheme, host, port) of a tool's URL; null when there is none or it does not parse. */
export function toolOrigin(url: string | undefined): string | null {
  if (url === undefined) return null;
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Seals the literal header values of the tools being saved (decisions 036, 068). Each tool with
 * literals keeps them in one sealed record named by its `headerSecrets`, bound to the origin of
 * the tool's URL; the stored (and answered) value of such a header is `null`. A `null` given back
 * keeps that header's value from the tool of the same name as saved before, only while the
 * tool's kind and URL origin stay the same (400 on the header otherwise, and when there is none):
 * a secret goes only where it was saved for. A tool whose values and origin are unchanged keeps
 * its record, so a running Turn that saved it still sends them; the records no tool keeps are
 * answered as `obsolete`, for the caller to delete in its transaction.
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
    const origin = toolOrigin(tool.url);
    if (headers === undefined || literals.length === 0) {
      out.push(rest);
      continue;
    }
    if (origin === null) {
      // checkToolKinds refuses such a tool first; a literal is never stored unsealed all the same.
      issues.push({ path: `tools.${index}.url`, message: 'a tool with literal headers needs an absolute http or https url' });
      continue;
    }
    const before = previous.find((p) => p.name === tool.name && p.headerSecrets !== undefined);
    // The saved values stay with the kind and origin they were saved for.
    const samePlace = before !== undefined && (before.kind ?? 'client') === (tool.kind ?? 'client') && toolOrigin(before.url) === origin;
    const saved = samePlace ? await readLiterals(sealed, before.headerSecrets!, before.url!, tx) : {};
    const values: Record<string, string> = {};
    for (const [name, value] of literals) {
      if (typeof value === 'string') values[name] = value;
      else if (saved[name] !== undefined) values[name] = saved[name];
      else if (before !== undefined && !samePlace) {
        issues.push({
          path: `tools.${index}.headers.${name}`,
          message: "null keeps a saved value only while the tool's kind and URL origin stay the same; this change moves it elsewhere: give the value again",
        });
      } else issues.push({ path: `tools.${index}.headers.${name}`, message: 'null keeps a saved value, and this tool has none for this header: give the value' });
    }
    const same = samePlace && sameValues(values, saved);
    const record = same ? before.headerSecrets! : await sealed.put(toolHeadersPurpose(origin), values, tx);
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

/**
 * A tool's literal header values for a send to `url`, opened; empty when the record is gone, not
 * one of ours, or bound to another origin than `url`'s (decision 068). A record sealed before
 * decision 068 (bound to no origin) is opened once and sealed again in place, bound to `url`'s
 * origin: from then on it opens for that origin only.
 */
export async function readLiterals(sealed: SealedRecords, recordId: string, url: string, tx?: Sql): Promise<Readonly<Record<string, string>>> {
  const origin = toolOrigin(url);
  if (origin === null) return {};
  const bound = toolHeadersPurpose(origin);
  const record = await sealed.getAs(recordId, [bound, TOOL_HEADERS_PURPOSE], tx);
  if (record === null) return {};
  if (record.purpose !== bound && !(await sealed.repurpose(recordId, TOOL_HEADERS_PURPOSE, bound, record.value, tx))) {
    // Another reader bound it first: it opens now only if that was this origin too.
    const again = await sealed.getAs(recordId, [bound], tx);
    return again === null ? {} : literalsOf(again.value);
  }
  return literalsOf(record.value);
}

function literalsOf(value: unknown): Readonly<Record<string, string>> {
  if (value === null || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function sameValues(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}
