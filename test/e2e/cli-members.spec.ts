import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CLI_ROOT, runCli, type CliRun } from '../support/cli-runner';
import { startTestApp, type TestApp } from '../support/test-app';

/** The compiled CLI's `openbot members …` commands (list, add, role, remove) against a listening server. */
jest.setTimeout(120_000);

interface Member {
  id: string;
  role: string;
  name: string | null;
}

describe('openbot CLI: members', () => {
  let t: TestApp;
  let url: string;
  let owner: Awaited<ReturnType<TestApp['createOrganization']>>;

  function cli(args: readonly string[], apiKey = owner.secret): Promise<CliRun> {
    return runCli(args, { OPENBOT_URL: url, OPENBOT_API_KEY: apiKey, OPENBOT_CONFIG: join(CLI_ROOT, 'no-such-config.json') });
  }
  async function ok(args: readonly string[], apiKey?: string): Promise<string> {
    const run = await cli(args, apiKey);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await t.createOrganization('CLI Members');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('add (with its first key shown once), list, change a role and remove a member', async () => {
    const added = await cli(['members', 'add', 'member', '--name', 'Ana']);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^id: +[0-9a-f-]{36}\nrole: +member\nname: +Ana\napi key: +[0-9a-f-]{36}\nsecret: +obk_\S+\n$/);
    expect(added.stderr).toContain('The secret is shown once');
    const memberId = /^id: +(\S+)/.exec(added.stdout)![1]!;
    const secret = /secret: +(\S+)/.exec(added.stdout)![1]!;

    const table = await ok(['members', 'list']);
    expect(table.split('\n')[0]).toMatch(/^ID\s+ROLE\s+NAME\s+EMAIL\s+CREATED$/);
    expect(table).toContain(`${owner.memberId}  owner`);
    expect(table).toMatch(new RegExp(`${memberId} +member +Ana`));
    // The new member's key works, and its role is what the owner gave.
    const listed = JSON.parse(await ok(['members', 'list', '--json'], secret)) as { data: Member[]; next: string | null };
    expect(listed.data.map((m) => [m.id, m.role])).toEqual([
      [owner.memberId, 'owner'],
      [memberId, 'member'],
    ]);

    expect(await ok(['members', 'role', memberId, 'viewer'])).toMatch(/role: +viewer/);
    expect(JSON.parse(await ok(['members', 'role', memberId, 'admin', '--json'])) as Member).toMatchObject({ id: memberId, role: 'admin' });

    expect(await ok(['members', 'remove', memberId])).toBe(`removed ${memberId}\n`);
    expect((JSON.parse(await ok(['members', 'list', '--json'])) as { data: Member[] }).data.map((m) => m.id)).toEqual([owner.memberId]);
    // Its keys stopped working with it.
    const revoked = await cli(['members', 'list'], secret);
    expect(revoked.code).toBe(2);
    expect(revoked.stderr).toMatch(/^Error: Unauthenticated: /);
  });

  it('the API refusals exit 2 with their type; an unknown role is a usage error (exit 1) before any request', async () => {
    const lastOwner = await cli(['members', 'remove', owner.memberId]);
    expect(lastOwner).toMatchObject({ code: 2, stdout: '' });
    expect(lastOwner.stderr).toMatch(/^Error: LastOwner: /);

    const viewer = await cli(['members', 'add', 'viewer']);
    const viewerSecret = /secret: +(\S+)/.exec(viewer.stdout)![1]!;
    const refused = await cli(['members', 'add', 'member'], viewerSecret);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^Error: Forbidden: /);

    const usage = await cli(['members', 'add', 'emperor'], 'obk_not-used');
    expect(usage).toEqual({ code: 1, stdout: '', stderr: 'Error: Usage: the role must be one of owner, admin, member, viewer\n' });
    const missing = await cli(['members', 'remove', '0190a0b0-0000-7000-8000-000000000000']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^Error: MemberNotFound: /);
  });
});
