import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** A curl flag that sends a request body. */
const DATA_FLAG = /(?:^|\s)(?:-d|--data|--data-raw|--data-binary)(?:\s|=)/;
/** A bash array spread into a command: `"${H[@]}"`. */
const SPREAD = /"\$\{(\w+)\[@\]\}"/g;

interface CurlProblem {
  readonly file: string;
  readonly command: string;
  readonly problem: string;
}

/** The fenced code blocks of a Markdown text, with `\`-continued lines joined into one. */
function codeBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map(([, body]) => body!.replace(/\\\n/g, ' '));
}

/**
 * Every curl command in `markdown`'s code blocks that sends a body (`-d`, `--data…`), checked for a
 * `content-type` header: the API answers 415 without one. A header may come through a bash array
 * defined earlier in the page, or in `shared` (the README's `H`, which the guide pages continue from).
 */
function curlProblems(file: string, markdown: string, shared: ReadonlyMap<string, string> = new Map()): { checked: number; problems: CurlProblem[] } {
  const arrays = new Map(shared);
  const problems: CurlProblem[] = [];
  let checked = 0;
  for (const block of codeBlocks(markdown)) {
    for (const line of block.split('\n')) {
      const array = /^\s*(\w+)=\((.*)\)\s*$/.exec(line);
      if (array) arrays.set(array[1]!, array[2]!);
      if (!/\bcurl\s/.test(line) || !DATA_FLAG.test(line)) continue;
      checked += 1;
      const command = line.trim();
      const unknown = [...line.matchAll(SPREAD)].map(([, name]) => name!).filter((name) => !arrays.has(name));
      if (unknown.length > 0) {
        problems.push({ file, command, problem: `uses ${unknown.map((n) => `\${${n}[@]}`).join(', ')}, defined neither in the page nor in the README` });
        continue;
      }
      const expanded = line.replace(SPREAD, (_, name: string) => arrays.get(name)!);
      if (!/content-type:\s*application\/json/i.test(expanded) && !/\s--json\s/.test(expanded)) {
        problems.push({ file, command, problem: "sends a body without -H 'content-type: application/json' (the API answers 415)" });
      }
    }
  }
  return { checked, problems };
}

/** The bash arrays the README's walk with curl defines (`H`), which guide pages continue to use. */
function readmeArrays(readme: string): Map<string, string> {
  const arrays = new Map<string, string>();
  for (const block of codeBlocks(readme)) {
    for (const [, name, value] of block.matchAll(/^\s*(\w+)=\((.*)\)\s*$/gm)) arrays.set(name!, value!);
  }
  return arrays;
}

describe('curl commands in the README and the guide', () => {
  it('the checker finds a body sent without content-type, directly or through an array, and an array no page defines', () => {
    const page = [
      '```sh',
      `curl -s $API/v1/bots -H "authorization: Bearer $KEY" \\`,
      `  -d '{"name":"x"}'`,
      `J=(-H "authorization: Bearer $KEY")`,
      `curl -s $API/v1/chats "\${J[@]}" -d '{}'`,
      `curl -s $API/v1/chats "\${Z[@]}" -d '{}'`,
      `curl -s $API/v1/chats -H 'Content-Type: application/json' -d '{}'`,
      `curl -s $API/v1/me -H "authorization: Bearer $KEY"`,
      '```',
    ].join('\n');
    const { checked, problems } = curlProblems('sample.md', page);
    expect(checked).toBe(4);
    expect(problems.map((p) => p.command.split(' ').slice(0, 4).join(' '))).toEqual(['curl -s $API/v1/bots -H', 'curl -s $API/v1/chats "${J[@]}"', 'curl -s $API/v1/chats "${Z[@]}"']);
    expect(problems[2]!.problem).toMatch(/defined neither/);
  });

  it('every curl that sends a body sends content-type: application/json', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const shared = readmeArrays(readme);
    expect(shared.get('H')).toMatch(/content-type: application\/json/);
    const guide = readdirSync(join(root, 'docs', 'guide')).filter((name) => name.endsWith('.md')).map((name) => join('docs', 'guide', name));
    let checked = 0;
    const problems: CurlProblem[] = [];
    for (const file of ['README.md', ...guide]) {
      const found = curlProblems(file, readFileSync(join(root, file), 'utf8'), file === 'README.md' ? new Map() : shared);
      checked += found.checked;
      problems.push(...found.problems);
    }
    expect(problems).toEqual([]);
    // The walks were read: the README and the guide send bodies with curl in well over a dozen places.
    expect(checked).toBeGreaterThan(20);
  });
});
