/**
 * A Dockerfile read into stages, enough to check the image's shape without a Docker daemon:
 * line continuations, comments, global ARG defaults substituted into FROM, exec-form arguments.
 * Not a full parser (no heredocs, no escape directive): the test asserts on our own Dockerfile.
 */
export interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, ENV, USER, ... */
  readonly keyword: string;
  /** Everything after the keyword, continuations joined with a space. */
  readonly args: string;
  /** 1-based line of the keyword. */
  readonly line: number;
}

export interface Stage {
  /** The FROM image with global ARG defaults substituted. */
  readonly image: string;
  /** The `AS` name, or null. */
  readonly name: string | null;
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** Global ARGs (before the first FROM) and their defaults. */
  readonly globalArgs: ReadonlyMap<string, string>;
  readonly stages: readonly Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const instructions = logicalLines(text);
  const globalArgs = new Map<string, string>();
  const stages: { image: string; name: string | null; instructions: Instruction[] }[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/).filter((word) => !word.startsWith('--'));
      stages.push({
        image: substitute(image, globalArgs),
        name: as?.toUpperCase() === 'AS' && name !== undefined ? name : null,
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [key = '', ...value] = instruction.args.split('=');
        globalArgs.set(key.trim(), value.join('=').trim());
      }
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
}

/** The JSON array of an exec-form instruction (ENTRYPOINT, CMD, HEALTHCHECK CMD), or null for shell form. */
export function execForm(args: string): string[] | null {
  // HEALTHCHECK puts options and the word CMD before the array.
  const rest = args.replace(/^(--\S+\s+)*(CMD\s+)?/, '');
  if (!rest.startsWith('[')) return null;
  try {
    const parsed: unknown = JSON.parse(rest);
    return Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

/** KEY=value pairs of an ENV instruction (the `KEY=value KEY2=value2` form, values without spaces). */
export function envPairs(args: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const word of args.split(/\s+/)) {
    const eq = word.indexOf('=');
    if (eq > 0) pairs.set(word.slice(0, eq), word.slice(eq + 1).replace(/^"(.*)"$/, '$1'));
  }
  return pairs;
}

function logicalLines(text: string): Instruction[] {
  const result: Instruction[] = [];
  let pending: { parts: string[]; line: number } | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    // Comment lines are dropped, also inside a continued instruction (as Docker does).
    if (/^\s*#/.test(line) || (pending === null && line.trim() === '')) return;
    const continued = line.endsWith('\\');
    const body = continued ? line.slice(0, -1) : line;
    if (pending === null) pending = { parts: [], line: index + 1 };
    pending.parts.push(body.trim());
    if (!continued) {
      const joined = pending.parts.filter((part) => part !== '').join(' ');
      const space = joined.search(/\s/);
      result.push({
        keyword: (space === -1 ? joined : joined.slice(0, space)).toUpperCase(),
        args: space === -1 ? '' : joined.slice(space + 1).trim(),
        line: pending.line,
      });
      pending = null;
    }
  });
  return result;
}

function substitute(value: string, args: ReadonlyMap<string, string>): string {
  return value.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (whole, name: string) => args.get(name) ?? whole);
}
