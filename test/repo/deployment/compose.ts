/**
 * Compose's variable interpolation, for the forms compose.yaml uses: `${NAME}`, `${NAME:-default}`,
 * `${NAME-default}`, `${NAME:?error}`, `${NAME?error}` and `$$` for a literal dollar.
 * A required variable missing from `env` throws with compose's message.
 */
export function interpolate(text: string, env: Readonly<Record<string, string | undefined>>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (whole, name: string | undefined, colon: string, op: string, word: string) => {
    if (whole === '$$') return '$';
    const value = env[name!];
    const missing = value === undefined || (colon === ':' && value === '');
    if (!missing) return value;
    if (op === '?') throw new Error(`required variable ${name} is missing a value: ${word}`);
    return op === '-' ? word : '';
  });
}

/** A compose service as far as the checks need it (long-form depends_on). */
export interface ComposeService {
  readonly image?: string;
  readonly build?: unknown;
  readonly command?: string | readonly string[];
  readonly entrypoint?: string | readonly string[];
  readonly environment?: Readonly<Record<string, string | number | boolean | null>> | readonly string[];
  readonly depends_on?: Readonly<Record<string, { readonly condition?: string }>> | readonly string[];
  readonly healthcheck?: { readonly test?: string | readonly string[]; readonly disable?: boolean };
  readonly ports?: readonly (string | number | { readonly target?: number; readonly published?: string | number })[];
  readonly volumes?: readonly (string | { readonly source?: string; readonly target?: string })[];
  readonly stop_grace_period?: string;
}

/** The environment of a service as strings (the list form `NAME=value` too). */
export function serviceEnv(service: ComposeService): Record<string, string> {
  const env: Record<string, string> = {};
  if (Array.isArray(service.environment)) {
    for (const entry of service.environment as readonly string[]) {
      const eq = entry.indexOf('=');
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
  } else {
    for (const [name, value] of Object.entries(service.environment ?? {})) {
      if (value !== null) env[name] = String(value);
    }
  }
  return env;
}

/** Compose durations such as `30s`, `1m30s`, `500ms`, in milliseconds. */
export function durationMs(value: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001 };
  let total = 0;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|us|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) throw new Error(`not a compose duration: ${value}`);
  for (const [, amount, unit] of parts) total += Number(amount) * units[unit!]!;
  return total;
}
