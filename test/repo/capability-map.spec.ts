import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

describe('docs/capability-map.md', () => {
  it('lists every rule with the tests that name it, as scripts/capability-map.mjs generates it', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [join(root, 'scripts', 'capability-map.mjs'), '--check'], { cwd: root, stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stderr?: Buffer }).stderr ?? error);
    }
    expect(output).toBe('');
  });
});
