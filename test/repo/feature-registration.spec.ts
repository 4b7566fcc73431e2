import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ENTITIES, PRODUCT_MODULES } from '../../libs/features/src/features';

const root = join(__dirname, '..', '..');
const LIBRARIES = [join(root, 'libs', 'platform', 'src'), join(root, 'libs', 'features', 'src')];

/** The folders of libs/platform/src and libs/features/src (each a platform module or a feature), as full paths. */
const folders = (): string[] =>
  LIBRARIES.flatMap((library) =>
    readdirSync(library, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(library, entry.name)),
  ).sort();

/** Class names a source file exports, after the decorator `decorator` (e.g. `@Entity(`, `@Module(`). */
function decoratedClasses(file: string, decorator: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(decorator)) return [];
  return [...text.matchAll(/export class (\w+)/g)].map((match) => match[1]!);
}

/** Modules the composition root configures itself with forRoot (they take the lists, they are not on them). */
const CONFIGURED_BY_THE_ROOT = new Set(['DatabaseModule']);

/**
 * The composition root (libs/features/src/features.ts) names each module once and every list of
 * the product's modules is derived from it: a folder whose entities or Nest module are left out
 * fails here instead of at run time (a missing entity only shows as a TypeORM error on first use).
 */
describe('[ARCH-06] each module registers itself through the one list of the composition root', () => {
  it('every TypeORM entity under a storage/ folder is in the DataSource, through its folder’s storage/entities.ts', () => {
    const listed = new Set(ENTITIES.map((entity) => (entity as { name: string }).name));
    const declared: string[] = [];
    for (const folder of folders()) {
      const storage = join(folder, 'storage');
      if (!existsSync(storage)) continue;
      const files = readdirSync(storage).filter((file) => file.endsWith('.entity.ts'));
      if (files.length > 0) expect({ folder, entities: existsSync(join(storage, 'entities.ts')) }).toEqual({ folder, entities: true });
      for (const file of files) declared.push(...decoratedClasses(join(storage, file), '@Entity('));
    }
    expect(declared.length).toBeGreaterThan(40);
    expect(declared.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('every folder’s Nest module is named once in the list the node imports', () => {
    const listed = PRODUCT_MODULES.flatMap((entry) => (entry.module === null ? [] : [entry.module.name]));
    expect(new Set(listed).size).toBe(listed.length);
    const declared: string[] = [];
    for (const folder of folders()) {
      for (const file of readdirSync(folder).filter((name) => name.endsWith('.module.ts'))) {
        declared.push(...decoratedClasses(join(folder, file), '@Module(').filter((name) => !CONFIGURED_BY_THE_ROOT.has(name)));
      }
    }
    expect(declared.length).toBeGreaterThan(25);
    expect(declared.filter((name) => !listed.includes(name))).toEqual([]);
  });

  it('the platform’s database folder names no module: it takes the entities as configuration', () => {
    const database = join(root, 'libs', 'platform', 'src', 'database');
    const imports = readdirSync(database)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...readFileSync(join(database, file), 'utf8').matchAll(/from '(\.\.\/[^']+)'/g)].map((match) => `${file}: ${match[1]}`));
    expect(imports).toEqual([]);
  });
});
