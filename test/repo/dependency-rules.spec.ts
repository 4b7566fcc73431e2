import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cruise, PROBE_FILES } from './cruise';

const root = join(__dirname, '..', '..');

describe('package boundaries', () => {
  const scratch = join(root, 'libs', 'domain', 'src', `zz-boundary-probe-${process.pid}.ts`);
  afterAll(async () => {
    await rm(scratch, { force: true });
  });

  it('[ARCH-01] the dependency check passes on the code as it is', async () => {
    // Another spec's probe may exist for a moment while this runs (specs run in parallel).
    const { code, output } = await cruise(['apps', 'libs'], { exclude: PROBE_FILES });
    expect(output).not.toMatch(/[1-9]\d* errors?/);
    expect(code).toBe(0);
  });

  it('[ARCH-01] the dependency check fails on a forbidden import (domain importing a feature module)', async () => {
    await writeFile(scratch, "import { OpenbotModule } from '@openbot/features';\nexport const probe = OpenbotModule;\n");
    const { code, output } = await cruise(['libs/domain']);
    expect(code).not.toBe(0);
    expect(output).toMatch(/zz-boundary-probe/);
  });
});

/**
 * Each rule below fails the check on a probe file that breaks it (written into the tree, cruised,
 * removed): the rules are proven to bite, not only to pass on today's code.
 */
describe('architecture rules enforced by the dependency check', () => {
  const probes: string[] = [];
  const probe = async (path: string, text: string): Promise<string> => {
    const file = join(root, path);
    probes.push(file);
    await writeFile(file, text);
    return path;
  };
  afterEach(async () => {
    for (const file of probes.splice(0)) await rm(file, { force: true });
  });

  async function expectViolation(folder: string, rule: string, file: string): Promise<void> {
    const { code, output } = await cruise([folder]);
    expect(code).not.toBe(0);
    expect(output).toMatch(new RegExp(`error ${rule}: [^\\n]*${file.split('/').pop()!.replace('.', '\\.')}`));
  }

  it('[ARCH-02] a storage entity may not import an HTTP DTO', async () => {
    const file = await probe(`libs/features/src/bots/storage/zz-probe-${process.pid}.entity.ts`, "import { CreateBotDto } from '../../../../api/src/bots/bot.dto';\nexport class Probe extends CreateBotDto {}\n");
    await expectViolation('libs/features/src/bots', 'entities-not-derived-from-dtos', file);
  });

  it('[ARCH-02] a storage entity may not use the DTO validation or documentation packages', async () => {
    const file = await probe(`libs/engine/src/storage/zz-probe-${process.pid}.ts`, "import { IsString } from 'class-validator';\nexport const probe = IsString;\n");
    await expectViolation('libs/engine/src/storage', 'entities-not-derived-from-dtos', file);
  });

  it('[ARCH-06] product code never imports the entry-point folder (apps/)', async () => {
    const file = await probe(`libs/features/src/zz-probe-${process.pid}.ts`, "import '../../../apps/server/src/module-paths';\nexport const probe = 1;\n");
    await expectViolation('libs/features/src', 'libs-not-to-apps', file);
  });

  it('[ARCH-01] the configuration folder, which the server loads alone before anything else, may not import the rest of the platform, a feature or Nest', async () => {
    const sibling = await probe(`libs/platform/src/config/zz-probe-lib-${process.pid}.ts`, "import { Sealer } from '../sealing/sealer';\nexport const probe = Sealer;\n");
    await expectViolation('libs/platform/src/config', 'config-loads-alone', sibling);
    const nest = await probe(`libs/platform/src/config/zz-probe-nest-${process.pid}.ts`, "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n");
    await expectViolation('libs/platform/src/config', 'config-loads-alone', nest);
  });

  it('[ARCH-01] libs/core may not use Nest or TypeORM', async () => {
    const nest = await probe(`libs/core/src/zz-probe-nest-${process.pid}.ts`, "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n");
    await expectViolation('libs/core/src', 'core-no-nest-no-typeorm', nest);
    const orm = await probe(`libs/core/src/zz-probe-orm-${process.pid}.ts`, "import { DataSource } from 'typeorm';\nexport const probe = DataSource;\n");
    await expectViolation('libs/core/src', 'core-no-nest-no-typeorm', orm);
  });

  it('[ARCH-01] libs/engine may not use Nest, and TypeORM only in its storage folder', async () => {
    const nest = await probe(`libs/engine/src/zz-probe-nest-${process.pid}.ts`, "import { Injectable } from '@nestjs/common';\nexport const probe = Injectable;\n");
    await expectViolation('libs/engine/src', 'engine-no-nest', nest);
    const orm = await probe(`libs/engine/src/zz-probe-orm-${process.pid}.ts`, "import type { EntityManager } from 'typeorm';\nexport type Probe = EntityManager;\n");
    await expectViolation('libs/engine/src', 'engine-typeorm-only-in-storage', orm);
  });

  it('[ARCH-01] an import cycle is an error even when it runs only through `import type`', async () => {
    const a = await probe(`libs/engine/src/zz-probe-a-${process.pid}.ts`, `import type { B } from './zz-probe-b-${process.pid}';\nexport interface A { b: B }\n`);
    await probe(`libs/engine/src/zz-probe-b-${process.pid}.ts`, `import type { A } from './zz-probe-a-${process.pid}';\nexport interface B { a: A }\n`);
    await expectViolation('libs/engine/src', 'no-circular-type-only', a);
  });

  it('[ARCH-01] two folders that import each other are a folder cycle even without a file-level cycle; one way is accepted', async () => {
    // memory → bots through one pair of files, bots → memory through another: no file imports itself back.
    const a = await probe(`libs/features/src/memory/zz-probe-folder-a-${process.pid}.ts`, `import { b } from '../bots/zz-probe-folder-b-${process.pid}';\nexport const a = b;\n`);
    const b = await probe(`libs/features/src/bots/zz-probe-folder-b-${process.pid}.ts`, 'export const b = 1;\n');
    const oneWay = await cruise([a, b]);
    expect(oneWay.output).not.toMatch(/no-folder-cycle/);
    expect(oneWay.code).toBe(0);

    const c = await probe(`libs/features/src/bots/zz-probe-folder-c-${process.pid}.ts`, `import { d } from '../memory/zz-probe-folder-d-${process.pid}';\nexport const c = d;\n`);
    const d = await probe(`libs/features/src/memory/zz-probe-folder-d-${process.pid}.ts`, 'export const d = 1;\n');
    const bothWays = await cruise([a, b, c, d]);
    expect(bothWays.code).not.toBe(0);
    expect(bothWays.output).toMatch(/error no-folder-cycle: libs\/features\/src\/memory → \s*libs\/features\/src\/bots →\s*libs\/features\/src\/memory/);
    expect(bothWays.output).not.toMatch(/error no-circular/);
  });

  it('[ARCH-01] a folder may not import the src root of its library, where the entry and the composition live', async () => {
    const file = await probe(`libs/protocol/src/oauth/zz-probe-root-${process.pid}.ts`, "import { visibilityOf } from '../declaration';\nexport const probe = visibilityOf;\n");
    await expectViolation(file, 'no-import-of-the-src-root', file);
  });

  it('a feature handler runs SQL through the query helper, not through TypeORM', async () => {
    const file = await probe(`libs/features/src/bots/queries/zz-probe-${process.pid}.ts`, "import { DataSource } from 'typeorm';\nexport const probe = DataSource;\n");
    await expectViolation('libs/features/src/bots', 'sql-through-the-query-helper', file);
  });

  it('[ARCH-01] a workflow or an HTTP handler takes no pg Pool or PoolClient: feature code gets the injected Database', async () => {
    const workflow = await probe(`libs/features/src/files/workflows/zz-probe-${process.pid}.ts`, "import type { Pool } from 'pg';\nexport function probeWorkflow(deps: { readonly pool: Pool }) { return deps; }\n");
    await expectViolation('libs/features/src/files', 'features-no-raw-pool', workflow);
    const handler = await probe(`libs/api/src/bots/zz-probe-${process.pid}.ts`, "import type { PoolClient } from 'pg';\nexport type Probe = PoolClient;\n");
    await expectViolation('libs/api/src/bots', 'features-no-raw-pool', handler);
  });

  it("[ARCH-01] a feature imports the engine's authoring entry only: the node entry and the engine's inner files are the platform's", async () => {
    const node = await probe(`libs/features/src/bots/zz-probe-${process.pid}.ts`, "import { EngineNode } from '@openbot/engine/node';\nexport const probe = EngineNode;\n");
    await expectViolation('libs/features/src/bots', 'engine-node-entry-only-from-the-platform', node);
    const inner = await probe(`libs/api/src/bots/zz-probe-${process.pid}.ts`, "import { Runner } from '../../../engine/src/node/runner';\nexport const probe = Runner;\n");
    await expectViolation('libs/api/src/bots', 'engine-node-entry-only-from-the-platform', inner);
    const authoring = await probe(`libs/features/src/files/zz-probe-${process.pid}.ts`, "import { defineWorkflow } from '@openbot/engine';\nexport const probe = defineWorkflow;\n");
    const { output } = await cruise(['libs/features/src/files']);
    expect(output).not.toMatch(new RegExp(`engine-node-entry-only-from-the-platform: [^\\n]*${authoring.split('/').pop()!.replace('.', '\\.')}`));
  });

  it('[ARCH-01] features depend on the platform, never the other way: a platform folder importing a feature fails the check', async () => {
    const upward = await probe(`libs/platform/src/models/zz-probe-${process.pid}.ts`, "import { BotsModule } from '../../../features/src/bots/bots.module';\nexport const probe = BotsModule;\n");
    await expectViolation('libs/platform/src/models', 'platform-imports-only-domain-core-protocol-engine', upward);
    const api = await probe(`libs/features/src/bots/zz-probe-${process.pid}.ts`, "import { ApiModule } from '../../../api/src/api.module';\nexport const probe = ApiModule;\n");
    await expectViolation('libs/features/src/bots', 'features-imports-only-domain-core-protocol-engine-platform', api);
  });
});
