import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { cruise } from './cruise';
import { PROBE_FILE } from './source-rules';

const root = join(__dirname, '..', '..');

/**
 * One model-call path (PLAT-06): ModelCalls (libs/platform/src/models/model-calls.ts) is the only
 * code outside libs/core that may turn a model reference into a provider call. Two checks fail on
 * a second path: the dependency rule on the ModelRegistry, and a scan of every import from
 * libs/core for the provider adapters and the model-step runner.
 */

/** The only files outside libs/core that may use a provider adapter or run a model step. */
const MODEL_CALL_PATH = new Set(['libs/platform/src/models/model-calls.ts', 'libs/platform/src/models/model-registry.ts']);

/** libs/core files whose exports call a provider: the wire adapters, the model step, the in-memory host. */
const PROVIDER_MODULES = ['libs/core/src/providers/openai-compatible.ts', 'libs/core/src/providers/anthropic.ts', 'libs/core/src/turn/model-step.ts', 'libs/core/src/host/in-memory-host.ts'];

/** Exported value names (classes, functions, constants) of one module. */
function exportedValues(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if ((ts.isClassDeclaration(statement) || ts.isFunctionDeclaration(statement)) && statement.name) names.push(statement.name.text);
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
    }
  }
  return names;
}

/** Imports of `forbidden` names from libs/core (`@openbot/core` or a relative path into it) in one file. */
function providerImports(file: string, text: string, forbidden: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
    const from = specifier.text;
    const intoCore = from === '@openbot/core' || from.startsWith('@openbot/core/') || (from.startsWith('.') && join(file, '..', from).startsWith(join(root, 'libs', 'core')));
    if (!intoCore) continue;
    const clause = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
    if (clause === undefined) {
      found.push(`* from ${from}`);
      continue;
    }
    if (ts.isNamespaceImport(clause) || ts.isNamespaceExport(clause)) {
      found.push(`* as ${clause.name.text} from ${from}`);
      continue;
    }
    for (const element of clause.elements) {
      const name = (element.propertyName ?? element.name).text;
      if (forbidden.has(name)) found.push(name);
    }
  }
  return found;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    // Another spec's probe file exists for a moment only (PROBE_FILE): it is not product code, and reading it may find it gone.
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !PROBE_FILE.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter((path) => !/(^|\/)(node_modules|dist)\//.test(relative(root, path)));
}

describe('one model-call path', () => {
  let forbidden: Set<string>;
  const probe = join(root, 'libs', 'features', 'src', 'chats', `zz-model-path-probe-${process.pid}.ts`);

  beforeAll(async () => {
    forbidden = new Set();
    for (const file of PROVIDER_MODULES) for (const name of exportedValues(file, await readFile(join(root, file), 'utf8'))) forbidden.add(name);
  });
  afterAll(async () => {
    await rm(probe, { force: true });
  });

  it('[PLAT-06] nothing in libs or apps but ModelCalls uses the provider adapters or runs a model step', async () => {
    // The scan knows what it looks for: the adapters and the step runner of libs/core.
    expect([...forbidden]).toEqual(expect.arrayContaining(['OpenAiCompatibleProvider', 'AnthropicProvider', 'runModelStep']));
    const files = [...(await sourceFiles(join(root, 'libs'))), ...(await sourceFiles(join(root, 'apps')))].filter((path) => !relative(root, path).startsWith('libs/core/'));
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const file of files) {
      const path = relative(root, file);
      if (MODEL_CALL_PATH.has(path)) continue;
      for (const name of providerImports(file, await readFile(file, 'utf8'), forbidden)) offenders.push(`${path}: ${name}`);
    }
    expect(offenders).toEqual([]);
  });

  it('[PLAT-06] the scan catches a second path: a workflow running a model step or building an adapter itself', () => {
    const file = join(root, 'libs', 'features', 'src', 'memory', 'learner.ts');
    expect(providerImports(file, "import { runModelStep, userMessage } from '@openbot/core';", forbidden)).toEqual(['runModelStep']);
    expect(providerImports(file, "import { OpenAiCompatibleProvider as P } from '@openbot/core';", forbidden)).toEqual(['OpenAiCompatibleProvider']);
    expect(providerImports(file, "import * as core from '@openbot/core';", forbidden)).toEqual(['* as core from @openbot/core']);
    expect(providerImports(file, "import { AnthropicProvider } from '../../../core/src/providers/anthropic';", forbidden)).toEqual(['AnthropicProvider']);
    expect(providerImports(file, "import { fitToContext, type ModelStepResult } from '@openbot/core';", forbidden)).toEqual([]);
  });

  it('[PLAT-06] the dependency rule refuses a ModelRegistry import anywhere but ModelCalls', async () => {
    await writeFile(probe, "import { ModelRegistry } from '../../../platform/src/models/model-registry';\nexport const probe = ModelRegistry;\n");
    // Only the probe and what it imports: other specs write and remove probes of their own meanwhile.
    const { code, output } = await cruise([relative(root, probe)]);
    expect(code).not.toBe(0);
    expect(output).toMatch(/model-registry-only-from-model-calls/);
    expect(output).toMatch(/zz-model-path-probe/);
  });
});
