import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The section of docs/architecture.md that maps the code: from its heading to the next `## `. */
function codeMapOf(page: string): string {
  const start = page.indexOf('\n## The map of the code\n');
  if (start < 0) throw new Error('docs/architecture.md has no "## The map of the code" section');
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/** The folders a code map names: the first cell of each table row, when it is one path in backticks. */
function foldersNamed(map: string): string[] {
  return [...map.matchAll(/^\| `([^`|]+)` \|/gm)].map(([, path]) => path!);
}

const foldersIn = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
    : [];

/**
 * What is wrong between the code map of `page` and the tree at `base`: a named folder that does not
 * exist, or a feature folder (`libs/features/src/<feature>`) or platform folder (`libs/platform/src/<folder>`)
 * that the map does not name.
 */
function codeMapProblems(base: string, page: string): string[] {
  const named = foldersNamed(codeMapOf(page));
  const problems = named.filter((path) => !existsSync(join(base, path))).map((path) => `${path} is named but does not exist`);
  for (const parent of ['libs/features/src', 'libs/platform/src']) {
    for (const folder of foldersIn(join(base, parent))) {
      if (!named.includes(`${parent}/${folder}`)) problems.push(`${parent}/${folder} is not named in the code map`);
    }
  }
  return problems;
}

describe('the code map of docs/architecture.md', () => {
  const page = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

  it('opens the page, names every library, and names only folders that exist; every feature and platform folder is named', () => {
    expect(page.indexOf('\n## ')).toBe(page.indexOf('\n## The map of the code\n'));
    const named = foldersNamed(codeMapOf(page));
    for (const library of ['libs/domain', 'libs/core', 'libs/protocol', 'libs/engine', 'libs/platform', 'libs/features', 'libs/api', 'libs/client', 'apps/server', 'apps/cli']) {
      expect(named).toContain(library);
    }
    expect(codeMapProblems(root, page)).toEqual([]);
  });

  it('fails on a named folder that does not exist and on a feature or platform folder the map leaves out', async () => {
    const base = await mkdtemp(join(tmpdir(), 'openbot-code-map-'));
    try {
      for (const folder of ['libs/features/src/bots', 'libs/features/src/unnamed', 'libs/platform/src/sealing', 'libs/platform/src/hidden']) {
        await mkdir(join(base, folder), { recursive: true });
      }
      const map = [
        '# Architecture',
        '',
        '## The map of the code',
        '',
        '| Folder | What |',
        '|---|---|',
        '| `libs/features/src/bots` | Bots |',
        '| `libs/features/src/gone` | a feature that was removed |',
        '| `libs/platform/src/sealing` | sealing |',
        '',
        '## Stack',
        '',
        '| `libs/platform/src/hidden` | named outside the code map, so it does not count |',
      ].join('\n');
      await writeFile(join(base, 'architecture.md'), map);
      expect(codeMapProblems(base, map)).toEqual([
        'libs/features/src/gone is named but does not exist',
        'libs/features/src/unnamed is not named in the code map',
        'libs/platform/src/hidden is not named in the code map',
      ]);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('has the recipe for adding a feature: one folder under libs/features/src and one registration line', () => {
    const recipe = page.slice(page.indexOf('\n## Add a feature in '));
    const steps = [...recipe.slice(0, recipe.indexOf('\n## ', 1)).matchAll(/^\d+\. \*\*/gm)];
    expect(page).toMatch(new RegExp(`\\n## Add a feature in ${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'][steps.length]} steps\\n`));
    expect(recipe).toContain('libs/features/src/<name>/');
    expect(recipe).toContain('feature list');
  });
});
