import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cruiseModules, folderCycles, folderOf, PROBE_FILES } from './cruise';

const root = join(__dirname, '..', '..');

/**
 * Folders form a tree (decision 079), counted as the architecture counts them: the first folder
 * of a library's src/ with everything below it, the src/ root as one folder. dependency-cruiser's
 * `no-folder-cycle` rule compares each directory on its own, so it misses two features whose
 * arrows land in different subfolders (memory/storage → bots/storage, bots → memory); this check
 * reads the module graph dependency-cruiser builds and counts at the first level.
 */
describe('[ARCH-01] no cycle between the first-level folders of a library or an app', () => {
  const probes: string[] = [];
  const probe = async (path: string, text: string): Promise<string> => {
    probes.push(join(root, path));
    await writeFile(join(root, path), text);
    return path;
  };
  afterEach(async () => {
    for (const file of probes.splice(0)) await rm(file, { force: true });
  });

  it('counts a folder with its subfolders, and the src root as one folder', () => {
    expect(folderOf('libs/features/src/bots/storage/bot.entity.ts')).toBe('libs/features/src/bots');
    expect(folderOf('libs/features/src/features.ts')).toBe('libs/features/src');
    expect(folderOf('apps/cli/src/commands/bots.ts')).toBe('apps/cli/src/commands');
    expect(folderOf('apps/cli/src/main.ts')).toBe('apps/cli/src');
    expect(folderOf('node_modules/typeorm/index.js')).toBeNull();
  });

  it('finds a cycle whose two arrows land in different subfolders, and none for one way', async () => {
    const a = await probe(`libs/features/src/memory/storage/zz-probe-level-a-${process.pid}.ts`, `import { b } from '../../bots/storage/zz-probe-level-b-${process.pid}';\nexport const a = b;\n`);
    const b = await probe(`libs/features/src/bots/storage/zz-probe-level-b-${process.pid}.ts`, 'export const b = 1;\n');
    expect(folderCycles(await cruiseModules([a, b]))).toEqual([]);

    const c = await probe(`libs/features/src/bots/zz-probe-level-c-${process.pid}.ts`, `import { d } from '../memory/zz-probe-level-d-${process.pid}';\nexport const c = d;\n`);
    const d = await probe(`libs/features/src/memory/zz-probe-level-d-${process.pid}.ts`, 'export const d = 1;\n');
    expect(folderCycles(await cruiseModules([a, b, c, d]))).toEqual([['libs/features/src/bots', 'libs/features/src/memory']]);
  });

  it('the code as it is has none', async () => {
    // Another spec's probe may exist for a moment while this runs (specs run in parallel).
    const modules = await cruiseModules(['apps', 'libs'], { exclude: PROBE_FILES });
    expect(modules.length).toBeGreaterThan(500);
    expect(folderCycles(modules)).toEqual([]);
  });
});
