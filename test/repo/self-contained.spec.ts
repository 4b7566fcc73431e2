import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);
/** The team's folder beside the working copy, which users never have. */
const sibling = 'shared';

/**
 * The repository is all a user gets: its documentation, its rule catalogue and its capability
 * map must not lean on files beside it (issue 11). The clone is of the committed HEAD, so this
 * proves what a user who clones the repository would see.
 */
describe('a fresh clone of the repository', () => {
  let base: string;
  let clone: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'openbot-clone-'));
    // One level down, so that `../shared` of the clone is an empty temporary folder's child.
    clone = join(base, 'checkout', 'openbot');
    await run('git', ['clone', '--quiet', '--no-hardlinks', root, clone]);
  });

  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('generates the capability map from its own rule catalogue, with no installed package and nothing beside it', async () => {
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);
    expect(existsSync(join(clone, '..', sibling))).toBe(false);
    const env = { PATH: process.env.PATH ?? '', HOME: base };
    await run(process.execPath, [join(clone, 'scripts', 'capability-map.mjs')], { cwd: clone, env });

    const rules = [...(await readFile(join(clone, 'docs', 'rules.md'), 'utf8')).matchAll(/^- ([A-Z]+-\d+) /gm)].map((m) => m[1]);
    const map = await readFile(join(clone, 'docs', 'capability-map.md'), 'utf8');
    const rows = [...map.matchAll(/^\| ([A-Z]+-\d+) \| (.*) \|$/gm)].map((m) => ({ id: m[1], cell: m[2] }));
    expect(rules.length).toBeGreaterThan(100);
    expect(rows.map((r) => r.id)).toEqual(rules);
    // It read the clone's own test files: a rule proved by the engine tests lists them.
    expect(rows.find((r) => r.id === 'EXE-02')?.cell).toContain('`test/integration/engine/command-keys.spec.ts`');
  });

  it('has docs for the execution model, the rules, the HTTP contract and the architecture', () => {
    for (const doc of ['execution-model.md', 'rules.md', 'http-api.md', 'architecture.md', 'benchmarks.md']) {
      expect(existsSync(join(clone, 'docs', doc))).toBe(true);
    }
  });

  it('no tracked file points outside the repository: no sibling shared folder, no machine path, no team-only document', async () => {
    const outside = [
      ['..', sibling, ''].join('/'),
      ['', 'work', ''].join('/'),
      ...['ARCHITECTURE', 'API', 'API-FEATURES', 'WORKLOAD', 'STYLE', 'execution-design'].map((name) => `${name}.md`),
    ];
    // A team-only document by bare name; `docs/API.md` inside the repository would be fine.
    const names = outside.map((s) => `(?<![\\w./-])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
    // …and the same folder spelled as path segments, as in join(root, '..', <folder>).
    const pattern = new RegExp([...names, `['"]\\.\\.['"],\\s*['"]${sibling}['"]`].join('|'));
    const { stdout } = await run('git', ['ls-files', '-z'], { cwd: clone, maxBuffer: 64 * 1024 * 1024 });
    const found: string[] = [];
    // docs/capability-map.md is generated from docs/rules.md, the generator and the test titles,
    // all checked here; capability-map.spec.ts keeps it equal to what they generate.
    for (const file of stdout.split('\0').filter((f) => f !== '' && f !== 'docs/capability-map.md')) {
      const text = await readFile(join(clone, file), 'utf8');
      if (text.includes('\0')) continue;
      text.split('\n').forEach((line, i) => {
        if (pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });
});
