import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

async function cruise(paths: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs'), '--config', '.dependency-cruiser.cjs', ...paths], { cwd: root });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('package boundaries', () => {
  const scratch = join(root, 'libs', 'domain', 'src', `zz-boundary-probe-${process.pid}.ts`);
  afterAll(async () => {
    await rm(scratch, { force: true });
  });

  it('[ARCH-01] the dependency check passes on the code as it is', async () => {
    const { code, output } = await cruise(['apps', 'libs']);
    expect(output).not.toMatch(/[1-9]\d* errors?/);
    expect(code).toBe(0);
  });

  it('[ARCH-01] the dependency check fails on a forbidden import (domain importing a feature module)', async () => {
    await writeFile(scratch, "import { OpenbotModule } from '@openbot/openbot';\nexport const probe = OpenbotModule;\n");
    const { code, output } = await cruise(['libs/domain']);
    expect(code).not.toBe(0);
    expect(output).toMatch(/zz-boundary-probe/);
  });
});
