import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/**
 * scripts/capability-map.mjs on a tiny repository of its own: a catalogue of six rules and one
 * spec file (test/repo/fixtures/test-titles.spec.txt) that names them in every way jest allows.
 * Only test cases count: a describe passes its rule IDs to the cases inside it but is never a case.
 */
describe('the capability map generator', () => {
  let dir: string;
  let rows: Map<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openbot-capability-map-'));
    await mkdir(join(dir, 'scripts'));
    await mkdir(join(dir, 'docs'));
    await mkdir(join(dir, 'test'));
    for (const script of ['capability-map.mjs', 'test-cases.mjs']) await copyFile(join(root, 'scripts', script), join(dir, 'scripts', script));
    await copyFile(join(root, 'test', 'repo', 'fixtures', 'test-titles.spec.txt'), join(dir, 'test', 'titles.spec.ts'));
    const rules = ['XX-01', 'XX-02', 'XX-03', 'XX-04', 'XX-05', 'XX-06'].map((id) => `- ${id} A rule.`);
    await writeFile(join(dir, 'docs', 'rules.md'), `# Rules\n\n${rules.join('\n')}\n`);
    await run(process.execPath, [join(dir, 'scripts', 'capability-map.mjs')], { cwd: dir });
    const map = await readFile(join(dir, 'docs', 'capability-map.md'), 'utf8');
    rows = new Map([...map.matchAll(/^\| (XX-\d+) \| (.*) \|$/gm)].map((m) => [m[1], m[2]]));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cases = (id: string) => rows.get(id)?.split('<br>') ?? [];

  it('a describe that names a rule but holds no test case proves nothing', () => {
    expect(rows.get('XX-01')).toBe('not built yet');
  });

  it('a naming describe passes its rule to every case inside, shown with the describe titles', () => {
    expect(cases('XX-02')).toEqual([
      '`test/titles.spec.ts`: a naming describe › passes its rule to the case inside',
      '`test/titles.spec.ts`: a naming describe › an inner describe › and to the cases nested deeper',
    ]);
  });

  it('it.each and test.each titles count, as their templates; a describe that names nothing adds nothing', () => {
    expect(cases('XX-03')).toEqual([
      '`test/titles.spec.ts`: names its own rule',
      '`test/titles.spec.ts`: a templated title %s counts once, as written',
    ]);
    expect(cases('XX-04')).toEqual(['`test/titles.spec.ts`: a tagged table title $a', '`test/titles.spec.ts`: a concurrent each']);
  });

  it('escaped quotes stay in the title, pipes are escaped for the table, template titles count', () => {
    expect(cases('XX-05')).toEqual(["`test/titles.spec.ts`: it's escaped and has a \\| pipe", '`test/titles.spec.ts`: a template title']);
  });

  it('comments, strings, regular expressions, todo and skipped tests are not test cases', () => {
    expect(rows.get('XX-06')).toBe('not built yet');
  });

  it('refuses a rule catalogue outside the repository', async () => {
    const outside = run(process.execPath, [join(dir, 'scripts', 'capability-map.mjs')], { cwd: dir, env: { ...process.env, OPENBOT_RULES: '../rules.md' } });
    await expect(outside).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('inside the repository') });
  });
});
