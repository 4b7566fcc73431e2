import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROBE_FILE } from './source-rules';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Probe files other repository specs write for a moment (see PROBE_FILE), as dependency-cruiser's `--exclude` pattern. */
export const PROBE_FILES = PROBE_FILE.source;

/** Runs dependency-cruiser with the project's rules on `paths`: its exit code and everything it printed. */
export async function cruise(paths: string[], options: { readonly exclude?: string } = {}): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs'), '--config', '.dependency-cruiser.cjs', ...(options.exclude ? ['--exclude', options.exclude] : []), ...paths], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** One module of dependency-cruiser's JSON answer: its path and the resolved paths it imports. */
export interface CruisedModule {
  readonly source: string;
  readonly dependencies: ReadonlyArray<{ readonly resolved: string }>;
}

/** Runs dependency-cruiser on `paths` for its module graph (rules are still applied; their verdict is not read here). */
export async function cruiseModules(paths: string[], options: { readonly exclude?: string } = {}): Promise<CruisedModule[]> {
  const { output } = await cruise(['--output-type', 'json', ...paths], options);
  return (JSON.parse(output) as { modules: CruisedModule[] }).modules;
}

/**
 * The folder of a path as decision 079 counts folders: `libs/<lib>/src/<first folder>` (files
 * directly in src/ are one folder, `libs/<lib>/src`; so a feature is `libs/features/src/<feature>`),
 * `apps/<app>/src/<first folder>` and `apps/<app>/src` likewise; null outside libs/ and apps/.
 */
export function folderOf(path: string): string | null {
  const nested = /^(libs|apps)\/[^/]+\/src\/[^/]+(?=\/)/.exec(path);
  if (nested) return nested[0];
  const root = /^((libs|apps)\/[^/]+\/src)\/[^/]+$/.exec(path);
  return root ? root[1]! : null;
}

/** Groups of two or more folders that import each other through any of their files (strongly connected components), each sorted. */
export function folderCycles(modules: readonly CruisedModule[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const module of modules) {
    const from = folderOf(module.source);
    if (from === null) continue;
    const arrows = graph.get(from) ?? new Set<string>();
    graph.set(from, arrows);
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to !== null && to !== from) arrows.add(to);
    }
  }
  // Tarjan's algorithm.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (folder: string): void => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    onStack.add(folder);
    for (const next of graph.get(folder) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(folder, Math.min(low.get(folder)!, index.get(next)!));
      }
    }
    if (low.get(folder) === index.get(folder)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== folder);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const folder of [...graph.keys()].sort()) if (!index.has(folder)) visit(folder);
  return cycles;
}
