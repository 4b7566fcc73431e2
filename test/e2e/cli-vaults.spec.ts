import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../support/test-app';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's `openbot vaults …` against a listening server: values go in, never come out. */
const ROOT = join(__dirname, '..', '..');
const SECRET = 'cli-VAULT-secret-value-0042';

jest.setTimeout(120_000);


describe('openbot CLI: vaults', () => {
  let t: TestApp;
  let env: Record<string, string>;

  function cli(args: readonly string[], extra: Record<string, string> = {}): Promise<CliRun> {
    return runCli(args, { ...env, ...extra });
  }

  async function ok(args: readonly string[], extra: Record<string, string> = {}): Promise<string> {
    const run = await cli(args, extra);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    expect(run.stdout).not.toContain(SECRET);
    return run.stdout;
  }

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const org = await t.createOrganization('CLI Vaults');
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: org.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('vaults create|list|get, items add|list|get|set|update|delete, users and delete print what the API holds and never a value', async () => {
    const vault = JSON.parse(await ok(['vaults', 'create', 'ops', '--json'])) as { id: string };
    expect(await ok(['vaults', 'list'])).toMatch(new RegExp(`${vault.id}\\s+ops`));
    expect(await ok(['vaults', 'get', vault.id])).toContain('ops');
    // The value comes from the environment, not the command line.
    const item = JSON.parse(await ok(['vaults', 'items', 'add', vault.id, 'db', '--field', 'user=app', '--field-env', 'password=DB_PASSWORD', '--host', 'db.example.com', '--json'], { DB_PASSWORD: SECRET })) as {
      id: string;
      fieldNames: string[];
    };
    expect(item.fieldNames).toEqual(['password', 'user']);
    expect(await ok(['vaults', 'items', 'list', vault.id])).toMatch(/db\s+password,user\s+db\.example\.com/);
    expect(await ok(['vaults', 'items', 'get', vault.id, item.id])).toContain('password, user');
    expect(await ok(['vaults', 'items', 'set', vault.id, item.id, '--field-env', 'token=DB_PASSWORD'], { DB_PASSWORD: SECRET })).toMatch(/fields:\s+token/);
    expect(await ok(['vaults', 'items', 'update', vault.id, item.id, '--name', 'database', '--host', '*.example.com'])).toMatch(/name:\s+database[\s\S]*\*\.example\.com/);
    expect(await ok(['vaults', 'users', vault.id])).toMatch(/members:\s+\(none\)/);
    // A model provider's key as a reference to the item (its host must be in allowedHosts).
    await ok(['vaults', 'items', 'update', vault.id, item.id, '--host', '127.0.0.1:9']);
    const provider = JSON.parse(await ok(['providers', 'create', 'vaulted', '--base-url', 'http://127.0.0.1:9/v1', '--provider-key-ref', `${item.id}:token`, '--json'])) as { apiKey: unknown };
    expect(provider.apiKey).toEqual({ vaultItemId: item.id, field: 'token' });
    expect(await ok(['vaults', 'items', 'delete', vault.id, item.id])).toBe(`deleted ${item.id}\n`);
    expect(await ok(['vaults', 'delete', vault.id])).toBe(`deleted ${vault.id}\n`);
    // A missing field is a usage error; a refused request exits 2 with the API's type.
    expect((await cli(['vaults', 'items', 'add', vault.id, 'x', '--host', 'x.test'])).code).toBe(1);
    const refused = await cli(['vaults', 'get', vault.id]);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('VaultNotFound') });
  });
});
