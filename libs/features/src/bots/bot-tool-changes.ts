import type { MemberCaller } from '@openbot/domain';
import { recordAudit, type AuditWriter } from '../../../platform/src/audit/record-audit';
import type { BotTool, ToolHeaderValue } from './bot-view';

/** What changed in where one tool sends and with which headers: names only, never a value. */
export interface ToolChange {
  readonly tool: string;
  readonly kind: string;
  /** The URL before and after (null: none), when it changed. */
  readonly url?: { readonly from: string | null; readonly to: string | null };
  /** Header names (sorted) added, removed, or given a new value or reference (a literal given again counts). */
  readonly headers?: { readonly added: string[]; readonly removed: string[]; readonly changed: string[] };
}

/**
 * The URL and header changes from the saved tools `before` to the tools being saved `after` (as
 * given: a literal is a string there, a kept one null). Tools are matched by name; a tool added
 * or removed counts with its URL and every header. Only tools that send somewhere (a URL before
 * or after) are looked at.
 */
export function toolChanges(before: readonly BotTool[], after: readonly BotTool[]): ToolChange[] {
  const changes: ToolChange[] = [];
  const names = [...new Set([...after.map((t) => t.name), ...before.map((t) => t.name)])];
  for (const name of names) {
    const old = before.find((t) => t.name === name);
    const now = after.find((t) => t.name === name);
    if (old?.url === undefined && now?.url === undefined) continue;
    const from = old?.url ?? null;
    const to = now?.url ?? null;
    const oldHeaders = old?.headers ?? {};
    const newHeaders = now?.headers ?? {};
    const added = Object.keys(newHeaders).filter((header) => !(header in oldHeaders));
    const removed = Object.keys(oldHeaders).filter((header) => !(header in newHeaders));
    const changed = Object.keys(newHeaders).filter((header) => header in oldHeaders && !sameValue(oldHeaders[header], newHeaders[header]));
    const headers = added.length + removed.length + changed.length > 0 ? { headers: { added: added.sort(), removed: removed.sort(), changed: changed.sort() } } : {};
    const url = from !== to ? { url: { from, to } } : {};
    if (headers.headers === undefined && url.url === undefined) continue;
    changes.push({ tool: name, kind: now?.kind ?? old?.kind ?? 'client', ...url, ...headers });
  }
  return changes;
}

/** Records `bot.tools-changed` for the Bot when a tool's URL or headers changed (nothing otherwise). */
export async function auditToolChanges(tx: AuditWriter, caller: MemberCaller, botId: string, before: readonly BotTool[], after: readonly BotTool[]): Promise<void> {
  const tools = toolChanges(before, after);
  if (tools.length === 0) return;
  await recordAudit(tx, { organizationId: caller.organizationId, actor: caller, action: 'bot.tools-changed', target: { type: 'bot', id: botId }, details: { tools } });
}

/** Whether a header keeps its value: a kept literal (null), or the same reference; a literal given is a new value. */
function sameValue(before: ToolHeaderValue | undefined, after: ToolHeaderValue | undefined): boolean {
  if (after === null || after === undefined) return before === after;
  if (typeof after === 'string' || before === null || before === undefined || typeof before === 'string') return false;
  return before.vaultItemId.toLowerCase() === after.vaultItemId.toLowerCase() && before.field === after.field && before.prefix === after.prefix;
}
