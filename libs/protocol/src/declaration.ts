import { createHash } from 'node:crypto';

/** The annotations OpenBot reads from a tool (hints only: a server may lie, so they only decide repeat safety). */
export interface ToolHints {
  readonly readOnlyHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** One tool as a server listed it, after checks. */
export interface ListedTool {
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations: ToolHints;
  /** The tool's MCP Apps View (`_meta.ui.resourceUri`), when it has one. */
  readonly viewUri: string | null;
  /** Who may call it (`_meta.ui.visibility`, MCP Apps): the model, a View, or both (the default). Absent in lists cached before it was kept. */
  readonly visibility?: readonly ToolVisibility[];
}

/** MCP Apps tool visibility: `model` (offered to the model) and `app` (callable from a View). */
export type ToolVisibility = 'model' | 'app';

/** A tool's visibility, both when the server names none. */
export function visibilityOf(tool: { readonly visibility?: readonly ToolVisibility[] }): readonly ToolVisibility[] {
  return tool.visibility ?? ['model', 'app'];
}

/**
 * A saved App tool declaration (STC-07, STC-12): the tool as discovery saw it, the connection
 * and the connection revision it was seen on, and a digest of everything the call depends on.
 * A saved call sends exactly this, never a later list.
 */
export interface ToolDeclaration {
  readonly connectionId: string;
  readonly revision: number;
  /** The name on the server (what `tools/call` sends). */
  readonly serverName: string;
  /** The name the model sees (see modelToolName). */
  readonly modelName: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations: ToolHints;
  readonly viewUri: string | null;
  readonly visibility?: readonly ToolVisibility[];
  /** sha-256 of the canonical JSON of the server's tool (name, description, schema, annotations). */
  readonly digest: string;
}

/** The result of checking a server's tool list: usable tools, and why others were left out. */
export interface CheckedToolList {
  readonly tools: readonly ListedTool[];
  /** Tools whose schema is not a JSON Schema object, or whose name is empty: refused one by one. */
  readonly refused: ReadonlyArray<{ readonly name: string; readonly reason: string }>;
  /** Set when the list was longer than the cap and was cut (a warning on the connection). */
  readonly cutAt: number | null;
}

/** Most tools kept from one server; the rest are cut with a warning (a bad server cannot flood the model's context). */
export const DEFAULT_MAX_TOOLS = 128;
/** Largest input schema kept, as JSON text. */
export const MAX_SCHEMA_CHARS = 64 * 1024;

/**
 * Checks every tool of a `tools/list` answer on its own: a tool without a usable name or whose
 * `inputSchema` is not a JSON Schema object (`type: "object"`, object `properties` when present)
 * is refused with its reason, and the others stay usable. More than `maxTools` tools are cut.
 */
export function checkToolList(tools: readonly unknown[], maxTools = DEFAULT_MAX_TOOLS): CheckedToolList {
  const refused: Array<{ name: string; reason: string }> = [];
  const kept: ListedTool[] = [];
  const seen = new Set<string>();
  for (const raw of tools) {
    const tool = isObject(raw) ? raw : {};
    const name = typeof tool.name === 'string' ? tool.name : '';
    if (name === '' || name.length > 256) {
      refused.push({ name: name.slice(0, 64), reason: 'the tool has no usable name' });
      continue;
    }
    if (seen.has(name)) {
      refused.push({ name, reason: 'the server lists this name more than once' });
      continue;
    }
    const reason = schemaProblem(tool.inputSchema);
    if (reason !== null) {
      refused.push({ name, reason });
      continue;
    }
    seen.add(name);
    const meta = isObject(tool._meta) ? tool._meta : {};
    const ui = isObject(meta.ui) ? meta.ui : {};
    kept.push({
      name,
      title: typeof tool.title === 'string' ? tool.title : null,
      description: typeof tool.description === 'string' ? tool.description : null,
      inputSchema: tool.inputSchema as Record<string, unknown>,
      annotations: hintsOf(tool.annotations),
      viewUri: typeof ui.resourceUri === 'string' && ui.resourceUri.startsWith('ui://') ? ui.resourceUri : null,
      ...(Array.isArray(ui.visibility) ? { visibility: (['model', 'app'] as const).filter((v) => (ui.visibility as unknown[]).includes(v)) } : {}),
    });
  }
  const cutAt = kept.length > maxTools ? maxTools : null;
  return { tools: cutAt === null ? kept : kept.slice(0, maxTools), refused, cutAt };
}

/** The declaration of a listed tool, as a Bot saves it. */
export function declare(tool: ListedTool, connection: { readonly id: string; readonly revision: number }, modelName: string): ToolDeclaration {
  return {
    connectionId: connection.id,
    revision: connection.revision,
    serverName: tool.name,
    modelName,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
    viewUri: tool.viewUri,
    ...(tool.visibility === undefined ? {} : { visibility: tool.visibility }),
    digest: toolDigest(tool),
  };
}

/** Whether a call of this tool may be sent again when its answer was lost: only when the server says so. */
export function isRepeatSafe(hints: ToolHints): boolean {
  return hints.readOnlyHint === true || hints.idempotentHint === true;
}

/** The digest a saved declaration keeps: it changes when anything the call depends on changes. */
export function toolDigest(tool: Pick<ListedTool, 'name' | 'description' | 'inputSchema' | 'annotations'>): string {
  const canonical = canonicalJson({ name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema, annotations: tool.annotations });
  return createHash('sha256').update(canonical).digest('hex');
}

/** The JSON text of a declaration, as it is stored. */
export function encodeDeclaration(declaration: ToolDeclaration): string {
  return JSON.stringify(declaration);
}

/** A stored declaration back; throws for a document that is not one (a damaged or foreign row). */
export function decodeDeclaration(value: unknown): ToolDeclaration {
  const d = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (
    !isObject(d) ||
    typeof d.connectionId !== 'string' ||
    typeof d.revision !== 'number' ||
    typeof d.serverName !== 'string' ||
    typeof d.modelName !== 'string' ||
    typeof d.digest !== 'string' ||
    !isObject(d.inputSchema)
  ) {
    throw new TypeError('not a saved App tool declaration');
  }
  return {
    connectionId: d.connectionId,
    revision: d.revision,
    serverName: d.serverName,
    modelName: d.modelName,
    description: typeof d.description === 'string' ? d.description : '',
    inputSchema: d.inputSchema,
    annotations: hintsOf(d.annotations),
    viewUri: typeof d.viewUri === 'string' ? d.viewUri : null,
    ...(Array.isArray(d.visibility) ? { visibility: (['model', 'app'] as const).filter((v) => (d.visibility as unknown[]).includes(v)) } : {}),
    digest: d.digest,
  };
}

function schemaProblem(schema: unknown): string | null {
  if (!isObject(schema)) return 'inputSchema is not a JSON Schema object';
  if (schema.type !== 'object') return 'inputSchema must have type "object"';
  if (schema.properties !== undefined && !isObject(schema.properties)) return 'inputSchema.properties must be an object';
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) {
    return 'inputSchema.required must be an array of strings';
  }
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS) return `inputSchema is larger than ${MAX_SCHEMA_CHARS} characters`;
  return null;
}

function hintsOf(value: unknown): ToolHints {
  if (!isObject(value)) return {};
  const out: { -readonly [K in keyof ToolHints]: boolean } = {};
  for (const key of ['readOnlyHint', 'idempotentHint', 'destructiveHint', 'openWorldHint'] as const) if (typeof value[key] === 'boolean') out[key] = value[key];
  return out;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
