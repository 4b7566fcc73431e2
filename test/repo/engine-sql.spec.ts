import { productSources } from './source-rules';

/**
 * The engine's prepared statements live by role in libs/engine/src/sql/ (docs/engine.md, "Where
 * the code is"). node-pg prepares a statement name once per connection and refuses the same name
 * with another text, so a name defined twice is a trap: two copies that drift apart fail only on
 * the connection that prepared the other one first.
 */

const SQL_FOLDER = 'libs/engine/src/sql/';

/** A prepared statement's name: `name: 'engine.…'` (any quote). */
const DEFINITION = /\bname\s*:\s*(['"`])(engine\.[A-Za-z0-9_]+)\1/g;
/** A `name:` whose value holds an `engine.` literal anywhere, also a computed one (`name: x ? 'engine.a' : 'engine.b'`). */
const NAME_WITH_ENGINE_LITERAL = /\bname\s*:[^,\n]*(['"`])engine\.[A-Za-z0-9_]+\1/;
/** Any quoted `engine.…` literal. */
const ENGINE_LITERAL = /(['"`])(engine\.[A-Za-z0-9_]+)\1/g;

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** What breaks the rule, as `file:line what`; empty when every statement name is defined once, in sql/. */
function statementFindings(files: ReadonlyArray<{ file: string; text: string }>): string[] {
  const findings: string[] = [];
  const definedAt = new Map<string, string[]>();
  for (const { file, text } of files) {
    const inSql = file.startsWith(SQL_FOLDER);
    for (const match of text.matchAll(DEFINITION)) {
      const at = `${file}:${lineOf(text, match.index)}`;
      definedAt.set(match[2]!, [...(definedAt.get(match[2]!) ?? []), at]);
    }
    if (file.startsWith('libs/engine/src/') && !inSql) {
      text.split('\n').forEach((line, i) => {
        if (NAME_WITH_ENGINE_LITERAL.test(line)) findings.push(`${file}:${i + 1} defines a prepared statement outside ${SQL_FOLDER}`);
      });
    }
    if (inSql) {
      // Every name in sql/ is a plain `name: '…'`, so the duplicate check above sees all of them.
      for (const match of text.matchAll(ENGINE_LITERAL)) {
        const before = text.slice(Math.max(0, match.index - 40), match.index);
        if (!/\bname\s*:\s*$/.test(before)) findings.push(`${file}:${lineOf(text, match.index)} names ${match[2]} other than as a plain \`name: '…'\``);
      }
    }
  }
  for (const [name, places] of definedAt) {
    if (places.length > 1) findings.push(`${name} is defined ${places.length} times: ${places.join(', ')}`);
  }
  return findings.sort();
}

describe('the engine SQL', () => {
  it('defines every engine.* statement name exactly once, and only in libs/engine/src/sql/', () => {
    const sources = productSources(['libs', 'apps']);
    const inSql = sources.filter((s) => s.file.startsWith(SQL_FOLDER));
    expect(inSql.map((s) => s.file)).toEqual(expect.arrayContaining([`${SQL_FOLDER}executions.ts`, `${SQL_FOLDER}events.ts`, `${SQL_FOLDER}signals.ts`]));
    expect(inSql.flatMap((s) => [...s.text.matchAll(DEFINITION)]).length).toBeGreaterThan(50);
    expect(statementFindings(sources)).toEqual([]);
  });

  it('flags a name defined twice, a statement outside sql/ and a computed name', () => {
    const findings = statementFindings([
      { file: `${SQL_FOLDER}calls.ts`, text: "export const callStatus = {\n  name: 'engine.call_status',\n  text: 'UPDATE …',\n};\n" },
      { file: `${SQL_FOLDER}executions.ts`, text: "const s = { name: 'engine.call_status', text: 'UPDATE …' };\nconst n = flag ? 'engine.a' : 'engine.b';\n" },
      { file: 'libs/engine/src/node/engine.ts', text: "await tx.query({\n  name: forUpdate ? 'engine.x_for_update' : 'engine.x',\n  text: '…',\n});\n" },
      { file: 'libs/engine/src/run/pause.ts', text: "await tx.query({ name: 'engine.pause', text: '…', values: [id] });\n" },
    ]);
    expect(findings).toEqual([
      'engine.call_status is defined 2 times: libs/engine/src/sql/calls.ts:2, libs/engine/src/sql/executions.ts:1',
      'libs/engine/src/node/engine.ts:2 defines a prepared statement outside libs/engine/src/sql/',
      'libs/engine/src/run/pause.ts:1 defines a prepared statement outside libs/engine/src/sql/',
      "libs/engine/src/sql/executions.ts:2 names engine.a other than as a plain `name: '…'`",
      "libs/engine/src/sql/executions.ts:2 names engine.b other than as a plain `name: '…'`",
    ]);
  });
});
