import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..');
const ECHO = join(root, 'test', 'fixtures', 'features', 'echo');

/** The library entries a feature imports (the engine's authoring entry, never its node entry, never the API). */
const ENTRIES = new Set(['@openbot/domain', '@openbot/core', '@openbot/protocol', '@openbot/engine', '@openbot/platform', '@openbot/features']);
const PACKAGES = (() => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return new Set(Object.keys(manifest.dependencies ?? {}));
})();

/** The package a bare specifier names (`@scope/name` or `name`). */
const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * Every import of the .ts files under `folder` that leaves it other than through a library's
 * entry or a dependency of the product: a relative path out of the folder, the engine's node
 * entry, a path into a library, a package the product does not depend on.
 */
function importsLeavingFolder(folder: string): string[] {
  const found: string[] = [];
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));
  for (const name of files) {
    const file = join(folder, name);
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      const at = `${relative(root, file)}: ${specifier}`;
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        if (target !== folder && !target.startsWith(folder + sep)) found.push(at);
      } else if (specifier.startsWith('@openbot/')) {
        if (!ENTRIES.has(specifier)) found.push(at);
      } else if (specifier.startsWith('node:')) {
        continue;
      } else if (!PACKAGES.has(packageOf(specifier))) {
        found.push(at);
      }
    }
  }
  return found;
}

/** The product's sources (libs/, apps/; their unit specs left out) that contain `needle`. */
function productFilesNaming(needle: string): string[] {
  const found: string[] = [];
  for (const top of ['libs', 'apps']) {
    for (const name of readdirSync(join(root, top), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts') || name.endsWith('.spec.ts') || name.includes(`node_modules${sep}`)) continue;
      if (readFileSync(join(root, top, name), 'utf8').includes(needle)) found.push(join(top, name));
    }
  }
  return found;
}

/**
 * The recipe "add a feature" (docs/architecture.md, decision 080): a feature with a workflow and a
 * tool kind of its own is its folder plus one registration line. The test feature that shows it
 * (test/fixtures/features/echo, driven end to end by test/e2e/feature-recipe.spec.ts) reaches
 * nothing outside its folder but the libraries' entries, and nothing in the product names it.
 */
describe('[ARCH-01] a feature touches only its folder plus one registration line', () => {
  it('the test feature imports only library entries, dependencies and files of its own folder', () => {
    expect(readdirSync(ECHO).sort()).toEqual(['echo-tool.ts', 'echo.module.ts', 'echo.workflow.ts']);
    expect(importsLeavingFolder(ECHO)).toEqual([]);
  });

  it('no list of the product names its tool kind or its workflow', () => {
    expect(productFilesNaming('fixtures/features')).toEqual([]);
    expect(productFilesNaming("'echo.count'")).toEqual([]);
    expect(productFilesNaming("'echo'")).toEqual([]);
  });

  it('the check bites: an import out of the folder, into a library or of the engine’s node entry is reported', () => {
    const folder = mkdtempSync(join(tmpdir(), 'openbot-feature-probe-'));
    try {
      writeFileSync(
        join(folder, 'probe.module.ts'),
        [
          "import { Module } from '@nestjs/common';",
          "import { Engine } from '@openbot/engine';",
          "import { EngineNode } from '@openbot/engine/node';",
          "import { TurnTools } from '../../libs/platform/src/turn-core/turn-tool';",
          "import { probeTool } from './probe-tool';",
          "import leftpad from 'left-pad';",
        ].join('\n'),
      );
      expect(importsLeavingFolder(folder).map((line) => line.split(': ')[1])).toEqual(['@openbot/engine/node', '../../libs/platform/src/turn-core/turn-tool', 'left-pad']);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
