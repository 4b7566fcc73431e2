import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { productSources, root, type Finding } from './source-rules';

/**
 * EXE-05: features register their own workflows; the engine has no branch that knows about a
 * feature. Read on the syntax tree of libs/engine/src: it imports no product library, and none of
 * its strings (SQL, workflow names, event types, fault points, comparisons) names a feature.
 */

/** The product libraries the engine stands under: it may import none of them (only @openbot/domain and packages). */
const PRODUCT_LIBRARIES = /^@openbot\/(?!domain$)|libs\/(api|client|core|features|platform|protocol)\b|^\.\.\/\.\.\/\.\.\//;

/** Feature folders that are the engine's own vocabulary too, with why. */
const ENGINE_WORDS: Record<string, string> = {
  executions: 'the engine stores executions; the feature only reads them over HTTP',
  retention: 'the engine prunes its own ended event payloads by the days a caller gives it',
};

/** Words of the product's features, beyond the names of the feature folders themselves. */
const PRODUCT_WORDS = ['turn', 'tool', 'model', 'vault', 'billing', 'credit', 'budget', 'usage', 'delegation', 'task', 'plan', 'channel', 'egress', 'audit'];

/** Feature words the engine names on purpose, by file and string: each a label it stores, never a branch. */
const ALLOWED: Record<string, string> = {
  // CallKind (STC-10): what an outside call reaches, stored on its rows for audit; nothing in the engine branches on it.
  'libs/engine/src/logs/call-log.ts:model': 'a call kind label (STC-10)',
  'libs/engine/src/logs/call-log.ts:tool': 'a call kind label (STC-10)',
  'libs/engine/src/logs/call-log.ts:app': 'a call kind label (STC-10)',
  'libs/engine/src/logs/call-log.ts:oauth': 'a call kind label (STC-10)',
  'libs/engine/src/logs/call-log.ts:channel': 'a call kind label (STC-10)',
};

function featureWords(): string[] {
  const folders = readdirSync(join(root, 'libs', 'features', 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && ENGINE_WORDS[entry.name] === undefined)
    .flatMap((entry) => entry.name.split('-'))
    .map((word) => word.replace(/s$/, ''));
  return [...new Set([...folders, ...PRODUCT_WORDS])].sort();
}

function isText(node: ts.Node): node is ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateLiteralLikeNode {
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node);
}

/** What in one engine file knows about a feature: a product import, or a string naming a feature word. */
function featureKnowledge(file: string, text: string, words: readonly string[]): Finding[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const wordPattern = new RegExp(`(^|[^a-z])(${words.join('|')})s?(?![a-z])`, 'i');
  const findings: Finding[] = [];
  const at = (node: ts.Node, what: string): Finding => ({ file, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, what });
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      if (PRODUCT_LIBRARIES.test(node.moduleSpecifier.text)) findings.push(at(node, `imports ${node.moduleSpecifier.text}`));
    } else if (ts.isCallExpression(node) && node.expression.getText(source) === 'require') {
      findings.push(at(node, 'requires a module at run time'));
    } else if (isText(node)) {
      const match = wordPattern.exec(node.text);
      if (match !== null && ALLOWED[`${file}:${node.text}`] === undefined && !isScopeKind(node.text)) findings.push(at(node, `names "${match[2]}" in ${JSON.stringify(node.text.slice(0, 80))}`));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/** `member` is a command scope kind (IDN-10, IDN-11), the engine's own: the string alone, or its refusal texts. */
function isScopeKind(text: string): boolean {
  return text === 'member' || /^A (service|member) cannot (enter|send through) the (member|service) workflow $/.test(text);
}

describe('[EXE-05] the engine knows no feature', () => {
  const words = featureWords();

  it('[EXE-05] libs/engine imports no product library and none of its strings names a feature (workflow, table, event, fault point or branch)', () => {
    const sources = productSources(['libs/engine/src']);
    expect(sources.length).toBeGreaterThan(40);
    expect(words).toEqual(expect.arrayContaining(['app', 'approval', 'bot', 'chat', 'file', 'memory', 'reminder', 'turn']));
    expect(sources.flatMap(({ file, text }) => featureKnowledge(file, text, words))).toEqual([]);
  });

  it('[EXE-05] the check flags a product import, a feature workflow name, a feature table, a feature fault point and a branch on a feature', () => {
    const violation = [
      "import { ChatQueries } from '@openbot/features';",
      "import { Sealer } from '../../../platform/src/sealing/sealer';",
      "export const point: 'call.intent.committed' | 'file.object.written' = 'call.intent.committed';",
      'export function pick(workflow: string): number {',
      "  if (workflow.startsWith('chat.')) return 1;",
      "  return workflow === 'app.oauth.exchange' ? 2 : 0;",
      '}',
      'export const sql = `UPDATE approvals SET state = $1`;',
      "export const kind = 'member';",
    ].join('\n');
    expect(featureKnowledge('libs/engine/src/probe.ts', violation, words).map((f) => f.what)).toEqual([
      'imports @openbot/features',
      'imports ../../../platform/src/sealing/sealer',
      'names "file" in "file.object.written"',
      'names "chat" in "chat."',
      'names "app" in "app.oauth.exchange"',
      'names "approval" in "UPDATE approvals SET state = $1"',
    ]);
  });
});
