import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { FakeOpenAiServer, textReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';
import { runCli, type CliRun } from '../support/cli-runner';

/** The compiled CLI's billing commands against a listening server (PLAT-08): prices, budgets, usage, credits. */
const ROOT = join(__dirname, '..', '..');

jest.setTimeout(120_000);


describe('openbot CLI: billing commands', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;
  let env: Record<string, string>;

  function cli(args: readonly string[]): Promise<CliRun> {
    return runCli(args, env);
  }

  async function ok(args: readonly string[]): Promise<string> {
    const run = await cli(args);
    expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' });
    return run.stdout;
  }

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    fake = await FakeOpenAiServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: chat.secret, OPENBOT_CONFIG: join(ROOT, 'no-such-config.json') };
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('[PLAT-08] prices set|list, budgets create|list|delete, usage and credits print what the API holds', async () => {
    const price = JSON.parse(await ok(['prices', 'set', 'fake/gpt-test', '--input', '1000000', '--output', '2000000', '--json'])) as { id: string; model: string };
    expect(price.model).toBe('fake/gpt-test');
    expect(await ok(['prices', 'list'])).toMatch(/fake\/gpt-test\s+1\.000000\s+1\.000000\s+2\.000000/);
    const fractional = await cli(['prices', 'set', 'fake/gpt-test', '--input', '1.5', '--output', '1']);
    expect({ code: fractional.code, stderr: fractional.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('--input must be an integer') });
    const unknown = await cli(['prices', 'set', 'nobody/gpt', '--input', '1', '--output', '1']);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('model') });

    const budget = JSON.parse(await ok(['budgets', 'create', '--bot', chat.botId, '--period', 'day', '--limit-micros', '5000000', '--json'])) as { id: string };
    fake.enqueue(textReply(['priced'], [10, 5]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'hello');
    await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(await ok(['budgets', 'list'])).toMatch(new RegExp(`${budget.id}\\s+bot:${chat.botId}\\s+day\\s+5\\.000000\\s+0\\.000020\\s+0\\.000000`));
    expect(await ok(['usage'])).toMatch(/fake\/gpt-test\s+1\s+10\s+5\s+0\.000020\s+0/);
    expect(JSON.parse(await ok(['usage', '--group-by', 'bot', '--json']))).toEqual({ data: [{ key: chat.botId, calls: 1, inputTokens: 10, outputTokens: 5, costMicros: 20, unknownCalls: 0 }] });
    expect(await ok(['credits'])).toMatch(/^balance:\s+0\.000000$/m);
    expect(await ok(['budgets', 'delete', budget.id])).toBe(`deleted ${budget.id}\n`);
    const gone = await t.http().get(`/v1/budgets/${budget.id}`).set('authorization', bearer(chat.secret));
    expect(gone.status).toBe(404);
  });
});
