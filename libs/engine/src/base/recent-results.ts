import type { Json } from './json';

/** How many completed results a node keeps (the most recent ends). */
const MAX_ENTRIES = 1_024;
/** Results larger than this (in JSON characters) are not kept: they are read from the row. */
const MAX_RESULT_CHARS = 4 * 1_024;
/** How long a result is kept after its end: long enough for the caller that waited for it. */
const KEEP_MS = 60_000;

/**
 * The results of executions that completed on this node lately, for `Engine.result` (decision
 * 060). A completed execution's result never changes, so the node that committed the end can
 * answer it without reading the row back: a caller that submits, waits for the end and asks for
 * the result (the common shape of running a workflow) saves a read on its path. Only small
 * results are kept, only the most recent ends, and each for a minute; anything else is read as
 * before.
 */
export class RecentResults {
  /** Each result as the JSON text the row holds, so a kept result reads back exactly as a stored one. */
  private readonly results = new Map<string, { readonly text: string; readonly until: number }>();

  constructor(
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxResultChars = MAX_RESULT_CHARS,
    private readonly keepMs = KEEP_MS,
  ) {}

  /** Call after the end that completed `executionId` with `result` committed. */
  completed(executionId: string, result: Json): void {
    if (!fitsWithin(result, this.maxResultChars)) return;
    const text = JSON.stringify(result);
    if (text.length > this.maxResultChars) return;
    this.results.set(executionId, { text, until: performance.now() + this.keepMs });
    if (this.results.size > this.maxEntries) this.results.delete(this.results.keys().next().value!);
  }

  /** The kept result (a fresh value each time), or undefined when it is not kept. */
  get(executionId: string): Json | undefined {
    const kept = this.results.get(executionId);
    if (kept === undefined) return undefined;
    if (kept.until < performance.now()) {
      this.results.delete(executionId);
      return undefined;
    }
    return JSON.parse(kept.text) as Json;
  }
}

/**
 * Whether `value` may serialise to at most `limit` characters (an estimate; the caller checks the
 * text). It stops walking once past the limit, so a large result costs little to turn away.
 */
export function fitsWithin(value: Json, limit: number): boolean {
  let budget = limit;
  const walk = (v: Json): boolean => {
    if (v === null || typeof v === 'boolean' || typeof v === 'number') budget -= 8;
    else if (typeof v === 'string') budget -= v.length + 2;
    else if (Array.isArray(v)) {
      budget -= 2;
      for (const item of v) if (budget < 0 || !walk(item)) return false;
    } else {
      budget -= 2;
      for (const key in v) {
        budget -= key.length + 4;
        if (budget < 0 || !walk(v[key] as Json)) return false;
      }
    }
    return budget >= 0;
  };
  return walk(value);
}
