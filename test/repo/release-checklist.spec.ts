import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/**
 * Issue 10, point 9: the release pipeline audits the production dependencies. The advisory
 * endpoint is unreachable from the build machines, so this is a release step, not a CI step;
 * what CI can check is that the step exists, runs under the project's Node, and is named where a
 * release manager reads.
 */
describe('security: dependency audit for releases', () => {
  it('npm run audit audits production dependencies at level high, under Node 24', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.audit).toBe('bash scripts/node24.sh npm audit --omit=dev --audit-level=high');
  });

  it('the release checklist of docs/operating.md names npm run audit, and a decision says why passport-openidconnect 0.1 stays', () => {
    const operating = read('docs/operating.md');
    const checklist = operating.slice(operating.indexOf('## Release checklist'));
    expect(checklist.slice(0, checklist.indexOf('\n## ', 5))).toContain('`npm run audit`');
    const decision = read('docs/decisions/015-passport-openidconnect-and-the-mix-up.md');
    for (const defence of ['signature', 'PKCE', '`iss`']) expect(decision).toContain(defence);
  });
});
