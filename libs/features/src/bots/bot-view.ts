import { InvalidInput, type BotId, type InputIssue } from '@openbot/domain';
import { approvalIssues } from '../approvals/approval-policy';
import { referenceIssues, type VaultReference } from '../../../platform/src/vaults/vault-view';
import type { ReferenceUse } from '../../../platform/src/vaults/vault-secrets';
import type { BotMemorySettings } from './bot-memory';

export { BOT_TOOL_KINDS, BOT_TOOL_RETRIES, PLAN_STEP_STATUSES, type BotLimits, type BotTool, type BotToolKind, type BotToolRetry, type ToolHeaderValue } from '../../../platform/src/turn-core/tool-spec';
import type { BotLimits, BotTool, BotToolKind, ToolHeaderValue } from '../../../platform/src/turn-core/tool-spec';
import { PLAN_STEP_STATUSES } from '../../../platform/src/turn-core/tool-spec';

export const DEFAULT_BOT_LIMITS: Required<BotLimits> = { maxSteps: 16, maxSeconds: 900, maxOutputTokens: 200_000, maxCostMicros: null };

/** The largest value each limit may be set to; the smallest is 1. */
export const MAX_BOT_LIMITS: { readonly [K in keyof BotLimits]-?: number } = {
  maxSteps: 100,
  maxSeconds: 86_400,
  maxOutputTokens: 10_000_000,
  maxCostMicros: Number.MAX_SAFE_INTEGER,
};

/** What the API may show of a Bot. */
export interface BotView {
  readonly id: BotId;
  readonly name: string;
  /** `<provider name>/<model id>`: the provider is one of the organization's model providers. */
  readonly model: string;
  readonly instructions: string;
  /** Every tool with its effective `kind` (`client` when it was stored without one). */
  readonly tools: readonly BotTool[];
  /** The stored limits with DEFAULT_BOT_LIMITS filled in under them. */
  readonly limits: Required<BotLimits>;
  /** Whether Turns select context from the Bot's memory (`enabled`) and learn into it after they end (`learn`). */
  readonly memory: BotMemorySettings;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * The columns of a BotView, for handlers that read `bots` directly (also in RETURNING). Tools get
 * their effective kind and limits their defaults here, so every reader sees the same values.
 */
export const BOT_VIEW_COLUMNS = `id, name, model, instructions,
  (SELECT COALESCE(jsonb_agg('{"kind":"client"}'::jsonb || tool ORDER BY position), '[]'::jsonb)
     FROM jsonb_array_elements(tools) WITH ORDINALITY AS bot_tool(tool, position)) AS tools,
  '${JSON.stringify(DEFAULT_BOT_LIMITS)}'::jsonb || limits AS limits, memory,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Tool names are unique within a Bot; a repeat is an InvalidInput on that tool's name. */
export function checkToolNames(tools: readonly BotTool[]): void {
  const seen = new Set<string>();
  const issues: InputIssue[] = [];
  tools.forEach((tool, index) => {
    // An app entry has no name of its own: its tools' names come from their declarations.
    if (tool.kind === 'app') return;
    if (seen.has(tool.name)) issues.push({ path: `tools.${index}.name`, message: `tool name "${tool.name}" is used more than once` });
    seen.add(tool.name);
  });
  if (issues.length > 0) throw new InvalidInput(issues);
}

/** A tool as stored: its kind is always written out (`client` when absent). */
export function withEffectiveKind(tool: BotTool): BotTool {
  return { ...tool, kind: tool.kind ?? 'client' };
}

/**
 * The rules between a tool's fields: the approval policy, the headers, the fields only one kind
 * may have, then each kind's own rules from the kind itself (its `validate`, registered with
 * TurnTools by its feature, decision 078): http and background tools need a `url` that is an
 * absolute http or https URL without credentials; a client tool has neither `url` nor `retry`.
 * Each offending field is an InvalidInput issue (`tools.<index>.url`).
 */
export function checkToolKinds(tools: readonly BotTool[], kinds: { find(kind: BotToolKind): { validate(tool: BotTool, index: number): InputIssue[] } | undefined; names(): readonly string[] }): void {
  const issues: InputIssue[] = approvalIssues(tools);
  tools.forEach((tool, index) => {
    const kind = tool.kind ?? 'client';
    // The kinds a Bot may declare are those the node's features registered (decision 080), not a closed list.
    const registered = kinds.find(kind);
    if (registered === undefined) {
      issues.push({ path: `tools.${index}.kind`, message: `kind must be one of ${kinds.names().join(', ')}` });
      return;
    }
    issues.push(...headerIssues(tool, index));
    if (kind !== 'app' && tool.connectionId !== undefined) issues.push({ path: `tools.${index}.connectionId`, message: 'only an app tool has a connectionId' });
    if (kind !== 'app' && tool.tools !== undefined) issues.push({ path: `tools.${index}.tools`, message: 'only an app tool has tools' });
    if (kind !== 'delegate' && tool.botId !== undefined) issues.push({ path: `tools.${index}.botId`, message: 'only a delegate tool has a botId' });
    if (kind !== 'delegate' && tool.attached !== undefined) issues.push({ path: `tools.${index}.attached`, message: 'only a delegate tool has attached' });
    // The kind's own rules (its route, its target) are the kind's, registered with TurnTools by its feature (decision 078).
    issues.push(...registered.validate(tool, index));
  });
  if (issues.length > 0) throw new InvalidInput(issues);
}


/** The longest literal header value. */
const MAX_HEADER_VALUE_CHARS = 8192;

/** Most headers one tool may send. */
export const MAX_TOOL_HEADERS = 20;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
/** Headers the platform sets itself (or that frame the request): a tool may not set them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'idempotency-key', 'host', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer']);

/** An http or background tool's `headers`: names that are HTTP tokens, values that are Vault references. */
function headerIssues(tool: BotTool, index: number): InputIssue[] {
  if (tool.headers === undefined) return [];
  const path = `tools.${index}.headers`;
  const kind = tool.kind ?? 'client';
  if (kind !== 'http' && kind !== 'background') return [{ path, message: 'only http and background tools have headers' }];
  if (tool.headers === null || typeof tool.headers !== 'object' || Array.isArray(tool.headers)) return [{ path, message: 'headers must be an object' }];
  const names = Object.keys(tool.headers);
  if (names.length > MAX_TOOL_HEADERS) return [{ path, message: `a tool has at most ${MAX_TOOL_HEADERS} headers` }];
  const seen = new Set<string>();
  return names.flatMap((name) => {
    const at = `${path}.${name}`;
    if (!HEADER_NAME.test(name)) return [{ path: at, message: 'a header name must be an HTTP token' }];
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower)) return [{ path: at, message: `the platform sets ${lower} itself` }];
    if (seen.has(lower)) return [{ path: at, message: 'a header is named twice (names are case-insensitive)' }];
    seen.add(lower);
    const value: unknown = tool.headers![name];
    // A literal is stored sealed (decision 036); null keeps the one saved before.
    if (value === null) return [];
    if (typeof value === 'string') {
      if (value.length > MAX_HEADER_VALUE_CHARS || /[\r\n\0]/.test(value)) return [{ path: at, message: `a header value has at most ${MAX_HEADER_VALUE_CHARS} characters on one line` }];
      return [];
    }
    return referenceIssues(value, at);
  });
}

/** The Vault references the tools name, each with the URL its value is sent to (checked at save, SEC-02). */
export function toolReferenceUses(tools: readonly BotTool[]): ReferenceUse[] {
  return tools.flatMap((tool, index) =>
    Object.entries(tool.headers ?? {}).flatMap(([name, value]) => (isReference(value) ? [{ path: `tools.${index}.headers.${name}`, reference: value, url: tool.url ?? '' }] : [])),
  );
}

/** A header value that is a Vault reference (not a literal, not a sealed one). */
export function isReference(value: ToolHeaderValue | undefined): value is VaultReference {
  return value !== null && value !== undefined && typeof value === 'object';
}

/** The InvalidInput for a model whose provider the organization does not have. */
export function unknownModelProvider(provider: string): InvalidInput {
  return new InvalidInput([{ path: 'model', message: `model provider "${provider}" does not exist in this organization` }]);
}

/** The fixed parameters of a delegate tool: the task's first message. */
export const DELEGATE_PARAMETERS: Record<string, unknown> = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The task: the first message the other Bot gets' } },
  required: ['input'],
};

/**
 * The delegate tools' Bots must be the organization's (IDN-08): another organization's or an
 * unknown ID is an InvalidInput on that tool's `botId`.
 */
export async function checkDelegateBots(db: { rows<T>(sql: string, params: readonly unknown[]): Promise<T[]> }, organizationId: string, tools: readonly BotTool[]): Promise<void> {
  const wanted = tools.flatMap((tool, index) => (tool.kind === 'delegate' && tool.botId !== undefined ? [{ index, botId: tool.botId }] : []));
  if (wanted.length === 0) return;
  const found = await db.rows<{ id: string }>('SELECT id FROM bots WHERE organization_id = $1 AND id = ANY($2::uuid[])', [organizationId, wanted.map((w) => w.botId)]);
  const known = new Set(found.map((row) => row.id));
  const issues = wanted.filter((w) => !known.has(w.botId)).map((w) => ({ path: `tools.${w.index}.botId`, message: 'this Bot does not exist in this organization' }));
  if (issues.length > 0) throw new InvalidInput(issues);
}

/** The fixed parameters of the built-in `update_plan` tool. */
export const PLAN_PARAMETERS: Record<string, unknown> = {
  type: 'object',
  properties: {
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: { title: { type: 'string' }, status: { type: 'string', enum: [...PLAN_STEP_STATUSES] } },
        required: ['title', 'status'],
      },
    },
  },
  required: ['steps'],
};

/** The longest delay a reminder may be set for (a year, in seconds). */
export const MAX_REMIND_IN_SECONDS = 31_536_000;

/** The fixed parameters of the built-in `remind` tool: a message and exactly one of `at` or `inSeconds`. */
export const REMIND_PARAMETERS: Record<string, unknown> = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What to post into this Chat when the reminder is due' },
    at: { type: 'string', format: 'date-time', description: 'When (an ISO time); give this or inSeconds' },
    inSeconds: { type: 'integer', minimum: 1, maximum: MAX_REMIND_IN_SECONDS, description: 'After how many seconds; give this or at' },
  },
  required: ['message'],
};
