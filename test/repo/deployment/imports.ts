import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

/**
 * The packages the server's own code loads at run time: value imports, `export … from`,
 * `require()` and dynamic `import()` with a string literal, in the .ts files under `dirs`,
 * specs excluded. Type-only imports are skipped (tsc erases them). Returns package → first file.
 */
export function runtimePackages(root: string, dirs: readonly string[]): Map<string, string> {
  const packages = new Map<string, string>();
  for (const dir of dirs) {
    for (const file of tsFiles(join(root, dir))) {
      const text = readFileSync(file, 'utf8');
      const specifiers = [
        ...[...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1]!),
      ];
      for (const specifier of specifiers) {
        const name = packageName(specifier);
        if (name !== null && !packages.has(name)) packages.set(name, relative(root, file));
      }
    }
  }
  return packages;
}

/** `@scope/name/sub` → `@scope/name`; relative paths, `node:` built-ins and `@openbot/*` → null. */
function packageName(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || specifier.startsWith('@openbot/')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? null : name;
}

function tsFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...tsFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}
