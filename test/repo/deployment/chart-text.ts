/**
 * Checks on the chart's template text that need no Go template engine: where `.Values` paths are
 * used, whether actions open and close in pairs, and which schema defaults apply. A template whose
 * text passes can still fail to render; `helm template` (run when a helm binary exists) covers that.
 */

/** Every `.Values.a.b.c` path used in a template, as ['a', 'b', 'c']. `$.Values` counts too. */
export function valuesPaths(template: string): string[][] {
  const paths: string[][] = [];
  for (const match of template.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
    paths.push(match[1]!.slice(1).split('.'));
  }
  return paths;
}

export interface ActionCounts {
  /** `if`, `with`, `range`, `define` and `block` actions (an `else if` continues its block). */
  readonly opened: number;
  readonly ended: number;
}

/** Counts opening and `end` actions; comments are skipped. */
export function blockActions(template: string): ActionCounts {
  const actions = [...template.matchAll(/\{\{-?\s*(\/\*[\s\S]*?\*\/|[^}]*?)\s*-?\}\}/g)].map((m) => m[1]!.trim());
  const code = actions.filter((action) => !action.startsWith('/*'));
  return {
    opened: code.filter((action) => /^(if|with|range|define|block)\b/.test(action)).length,
    ended: code.filter((action) => /^end\b/.test(action)).length,
  };
}

/** The lines of a template from the one containing `start` through the next line indented no deeper. */
export function block(template: string, start: string): string {
  const lines = template.split('\n');
  const from = lines.findIndex((line) => line.includes(start));
  if (from === -1) return '';
  const indent = lines[from]!.search(/\S/);
  const rest = lines.slice(from + 1);
  const to = rest.findIndex((line) => line.trim() !== '' && !line.trim().startsWith('{{') && line.search(/\S/) <= indent);
  return [lines[from]!, ...(to === -1 ? rest : rest.slice(0, to))].join('\n');
}

/** A JSON Schema node, as far as the checks here need it. */
export interface SchemaNode {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly default?: unknown;
}

/** The schema node of a values path, or null when the schema does not describe it. */
export function schemaAt(schema: SchemaNode, path: readonly string[]): SchemaNode | null {
  let node: SchemaNode | undefined = schema;
  for (const key of path) {
    if (node === undefined) return null;
    const named: SchemaNode | undefined = node.properties?.[key];
    if (named !== undefined) {
      node = named;
    } else if (typeof node.additionalProperties === 'object') {
      node = node.additionalProperties;
    } else if (node.additionalProperties === false || node.properties !== undefined) {
      return null;
    } else {
      // A pass-through Kubernetes object (securityContext, affinity ...): anything below is allowed.
      return node;
    }
  }
  return node ?? null;
}

/** Every `default` in the schema with its values path. */
export function schemaDefaults(schema: SchemaNode, prefix: readonly string[] = []): [string[], unknown][] {
  const found: [string[], unknown][] = [];
  if (schema.default !== undefined) found.push([[...prefix], schema.default]);
  for (const [key, child] of Object.entries(schema.properties ?? {})) found.push(...schemaDefaults(child, [...prefix, key]));
  return found;
}

/** The value at a path of a parsed YAML document, or undefined. */
export function valueAt(values: unknown, path: readonly string[]): unknown {
  let node = values;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Helm's merge of a values file over the chart's values.yaml: maps merge key by key, anything
 * else (lists included) is replaced, and null removes the key.
 */
export function coalesce(defaults: unknown, overrides: unknown): unknown {
  if (!isMap(defaults) || !isMap(overrides)) return overrides === undefined ? defaults : overrides;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === null) delete merged[key];
    else merged[key] = coalesce(defaults[key], value);
  }
  return merged;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
