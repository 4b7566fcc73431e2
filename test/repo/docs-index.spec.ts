import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const root = join(__dirname, '..', '..');

/** A decision record's file name: its three-digit number, then its title in words. */
const RECORD = /^\d{3}-[a-z0-9-]+\.md$/;
/** An index line: `- [NNN — Title](NNN-title.md): summary`. */
const INDEX_LINE = /^- \[(\d{3}) — [^\]]+\]\(([^)]+)\): \S/gm;

/** What is wrong between the decision records in `dir` and the index `dir/README.md`. */
function decisionIndexProblems(dir: string): string[] {
  const records = readdirSync(dir).filter((name) => RECORD.test(name));
  const lines = [...readFileSync(join(dir, 'README.md'), 'utf8').matchAll(INDEX_LINE)];
  const named = lines.map(([, number, file]) => ({ number: number!, file: file! }));
  const problems: string[] = [];
  for (const record of records) {
    if (!named.some((line) => line.file === record)) problems.push(`${record} is missing from the index`);
  }
  for (const { number, file } of named) {
    if (!existsSync(join(dir, file))) problems.push(`the index names ${file}, which does not exist`);
    if (!file.startsWith(`${number}-`)) problems.push(`the index line ${number} links ${file}`);
    if (named.filter((line) => line.file === file).length > 1) problems.push(`the index names ${file} more than once`);
  }
  return [...new Set(problems)];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const outsideCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...outsideCode.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => anchorOf(heading!)));
}

/** Relative links of `file` (a path from the root) whose target file or heading does not exist. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const resolved = path === '' ? join(root, file) : join(root, dirname(file), path);
    if (!existsSync(resolved)) {
      broken.push(`${file}: ${target} (no ${relative(root, resolved)})`);
    } else if (anchor !== undefined && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${file}: ${target} (no heading #${anchor})`);
    }
  }
  return broken;
}

const markdownIn = (folder: string): string[] =>
  readdirSync(join(root, folder))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(folder, name));

describe('the documentation indexes', () => {
  it('docs/decisions/README.md has one line for every decision record and names no record that is missing', () => {
    expect(decisionIndexProblems(join(root, 'docs', 'decisions'))).toEqual([]);
  });

  it('the decision index check fails on a record left out and on a line naming no record', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'openbot-decisions-'));
    try {
      await writeFile(join(dir, '001-kept.md'), '# 001 — Kept\n');
      await writeFile(join(dir, '002-forgotten.md'), '# 002 — Forgotten\n');
      await writeFile(
        join(dir, 'README.md'),
        '# Decisions\n\n## Area\n\n- [001 — Kept](001-kept.md): kept.\n- [003 — Gone](003-gone.md): gone.\n',
      );
      expect(decisionIndexProblems(dir)).toEqual([
        '002-forgotten.md is missing from the index',
        'the index names 003-gone.md, which does not exist',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('docs/guide/README.md links every guide page', () => {
    const index = readFileSync(join(root, 'docs', 'guide', 'README.md'), 'utf8');
    const pages = readdirSync(join(root, 'docs', 'guide')).filter((name) => name.endsWith('.md') && name !== 'README.md');
    expect(pages.length).toBeGreaterThanOrEqual(10);
    expect(pages.filter((page) => !index.includes(`](${page})`))).toEqual([]);
  });

  it('the README is at most 12 KB and says the two commands', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
    expect(readme).toContain('\nnpm start ');
    expect(readme).toContain('\nnpm test ');
  });

  it('relative links in the README, docs/, docs/guide/ and the decision index reach a file and heading that exist', () => {
    const files = ['README.md', ...markdownIn('docs'), ...markdownIn(join('docs', 'guide')), join('docs', 'decisions', 'README.md')];
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });
});
