import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EngineNode } from '@openbot/engine/node';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/**
 * A transaction does its own after-commit work (docs/decisions/077-transaction-scoped-engine-handle.md):
 * feature code submits, signals, cancels, pauses and resumes through `engine.in(tx)`, and never
 * keeps a start closure, an announce() or a statement promise for after the COMMIT. The Database
 * helper (database/sql.ts) is where the transaction keeps them.
 */
const FORMS: ReadonlyArray<readonly [string, RegExp]> = [
  ['submitIn', /\.submitIn\s*\(/],
  ['sendIn', /\.sendIn\s*\(/],
  ['signalIn', /\.signalIn\s*\(/],
  ['commitBehind', /\bcommitBehind\b/],
  ['an inTransaction submit hook', /\binTransaction\s*[:(]/],
  ['a start closure for after the commit', /\blet\s+\w+\s*:\s*\(\)\s*=>\s*void\s*=\s*\(\)\s*=>\s*undefined/],
  ['an announce() kept for after the commit', /\.announce\b/],
];

/** The old after-commit forms one source text uses, by name. */
function afterCommitForms(text: string): string[] {
  return FORMS.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
}

/** Feature code: the product's libraries and the API, today's layout and the split one. */
const FEATURE_CODE = /^libs\/(openbot\/src|platform\/src|features|api\/src)\/.+\.ts$/;
/** The Database helper keeps what its transaction sends behind COMMIT; model-calls' publisher announces events, not signals. */
const ALLOWED = new Map([
  ['libs/platform/src/database/sql.ts', ['commitBehind']],
  ['libs/platform/src/database/sql.ts', ['commitBehind']],
  ['libs/platform/src/models/model-calls.ts', ['an announce() kept for after the commit']],
  ['libs/platform/src/models/model-calls.ts', ['an announce() kept for after the commit']],
]);

describe('after-commit work', () => {
  it('finds every old after-commit form in a probe text, and none in code that uses engine.in(tx)', () => {
    const old = [
      'let start: () => void = () => undefined;',
      'const submitted = await this.engine.submitIn(tx, command, { held: false });',
      'const sent = await engine.sendIn(tx, command, { held });',
      'const woken = await this.engine.signalIn(tx, id, NAME);',
      'tx.commitBehind(admitted.written);',
      'await engine.submit({ ...command, inTransaction: async (tx) => undefined });',
      'woken?.announce();',
    ].join('\n');
    expect(afterCommitForms(old).sort()).toEqual(FORMS.map(([name]) => name).sort());
    expect(afterCommitForms('const executionId = await this.engine.in(tx).submit(command);\nawait TURN.signal(this.engine.in(tx), id, APPROVAL_SIGNAL, payload);')).toEqual([]);
  });

  it('feature code keeps no start closure, announce(), commitBehind, submitIn, sendIn or signalIn', async () => {
    const { stdout } = await run('git', ['ls-files', '-co', '--exclude-standard', 'libs'], { cwd: root });
    const files = stdout.split('\n').filter((path) => FEATURE_CODE.test(path) && !path.endsWith('.spec.ts'));
    expect(files).toEqual(expect.arrayContaining(['libs/api/src/http-app.ts']));
    const found: string[] = [];
    for (const path of files) {
      const forms = afterCommitForms(await readFile(join(root, path), 'utf8').catch(() => ''));
      const allowed = ALLOWED.get(path) ?? [];
      for (const form of forms) if (!allowed.includes(form)) found.push(`${path}: ${form}`);
    }
    expect(found).toEqual([]);
  });

  it('the engine offers no submitIn, sendIn or signalIn, and its entry no CommitBehind', async () => {
    for (const name of ['submitIn', 'sendIn', 'signalIn']) expect(name in EngineNode.prototype).toBe(false);
    expect(typeof EngineNode.prototype.in).toBe('function');
    expect(await readFile(join(root, 'libs/engine/src/index.ts'), 'utf8')).not.toMatch(/CommitBehind|signalIn|submitIn/);
  });
});
