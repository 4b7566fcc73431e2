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
    const { stdout } = await run(process.execPath, [join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs'), '--config', '.dependency-cruiser.cjs', ...(options.exclude ? ['--exclude', options.exclude] : []), ...paths], { cwd: root });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}
