import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root and the compiled CLI the CLI specs run (`npm test` builds it first). */
export const CLI_ROOT = join(__dirname, '..', '..');
export const CLI_MAIN = join(CLI_ROOT, 'dist', 'apps', 'cli', 'src', 'main.js');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the compiled `openbot` CLI with `args` and answers its exit code and output. The test
 * process's own `OPENBOT_*` variables are dropped, so only `env` configures it.
 */
export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return startCli(args, env).done;
}

/** A CLI still running: its output so far, a wait for a line of it, and its end. */
export interface RunningCli {
  readonly done: Promise<CliRun>;
  /** Resolves with the first match of `pattern` in stdout (rejects if the CLI ends without one). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
}

/** Starts the compiled `openbot` CLI like `runCli`, for a command that waits for something the test does (a browser sign-in). */
export function startCli(args: readonly string[], env: Record<string, string>): RunningCli {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(clean)) if (name.startsWith('OPENBOT_')) delete clean[name];
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: CLI_ROOT, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const watchers: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    for (const watch of [...watchers]) watch();
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<CliRun>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return {
    done,
    waitFor(pattern) {
      return new Promise<RegExpExecArray>((resolve, reject) => {
        const watch = (): void => {
          const found = pattern.exec(stdout);
          if (found === null) return;
          watchers.splice(watchers.indexOf(watch), 1);
          resolve(found);
        };
        watchers.push(watch);
        watch();
        void done.then((run) => reject(new Error(`the CLI ended (${run.code}) without printing ${pattern}: ${run.stdout}${run.stderr}`)));
      });
    },
  };
}
