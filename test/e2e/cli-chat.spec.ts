import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chunks, heldStreamReply, textReply, toolCallReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, type ChatFixture } from '../support/chat-fixture';
import { CLI_MAIN, CLI_ROOT, runCli, startCli } from '../support/cli-runner';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * `openbot chat` as a person at a shell uses it: a Turn that waits for an approval says so, with
 * the command that decides it; a reader that stops early (`openbot chat --json | head`) ends the
 * CLI quietly with status 0.
 */
jest.setTimeout(120_000);

describe('openbot CLI: chat', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;
  let chat: ChatFixture;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    const pay = { name: 'pay', description: 'Pays money', parameters: { type: 'object', properties: { amount: { type: 'number' }, to: { type: 'string' } } }, kind: 'http', url: tools.url('/pay'), approval: 'always' };
    chat = await createChatFixture(t, { baseUrl: model.baseUrl, tools: [pay] });
    env = { OPENBOT_URL: `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, OPENBOT_API_KEY: chat.secret, OPENBOT_CONFIG: join(CLI_ROOT, 'no-such-config.json') };
  });
  /** The chat's pending approval, once the Turn has asked for it. */
  async function pendingApproval(): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await t.http().get(`/v1/approvals?chatId=${chat.chatId}&state=pending`).set('authorization', bearer(chat.secret)).expect(200);
      const [approval] = (res.body as { data: Array<{ id: string }> }).data;
      if (approval !== undefined) return approval.id;
      if (Date.now() > deadline) throw new Error(`no pending approval on chat ${chat.chatId}`);
      await sleep(50);
    }
  }

  afterAll(async () => {
    await model?.close();
    await tools?.close();
    await t?.close();
  });

  it('a Turn waiting for an approval prints the tool, its arguments, the approval ID and the command that decides it; that command lets the Turn go on', async () => {
    model.enqueue(toolCallReply('call_pay', 'pay', ['{"amount":', '40,"to":"ana"}'], [10, 5]), textReply(['Paid.'], [12, 2]));
    tools.enqueue(jsonReply(200, { modelOutput: 'paid 40 to ana' }));

    const running = startCli(['chat', chat.chatId, 'Pay Ana 40'], env);
    // The Turn waits: the API shows the pending approval (the CLI prints its note when it reads approval.requested, before any decision).
    const approvalId = await pendingApproval();
    expect(tools.requests).toHaveLength(0);

    // The command the note prints decides it.
    const decided = await runCli(['approvals', 'approve', approvalId], env);
    expect(decided.code).toBe(0);
    expect(decided.stdout).toMatch(/state:\s+approved/);

    const run = await running.done;
    expect(run.code).toBe(0);
    // stdout stays the reply; the notes are on stderr.
    expect(run.stdout).toBe('Paid.\n');
    expect(run.stderr).toBe(
      [
        'Waiting for approval: the tool pay wants to run with {"amount":40,"to":"ana"}.',
        `  approval: ${approvalId}`,
        `  approve:  openbot approvals approve ${approvalId}`,
        `  deny:     openbot approvals deny ${approvalId} --reason "<why>"`,
        `Approval ${approvalId} approved.`,
        '',
      ].join('\n'),
    );
    expect(tools.requests).toHaveLength(1);
  });

  it('`openbot chat --json | head -n 1`: the reader closing the pipe ends the CLI quietly with status 0, no EPIPE stack trace', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The reply is held after its first chunk, so the CLI still has events to write once the reader has gone.
    model.enqueue(heldStreamReply([chunks.role(), chunks.text('One '), chunks.text('two '), chunks.text('three.'), chunks.finish('stop'), chunks.usage(5, 3)], { holdAfter: 1, release: released }));

    const child = spawn(process.execPath, [CLI_MAIN, 'chat', chat.chatId, 'Count to three', '--json'], { cwd: CLI_ROOT, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // Like `head -n 1`: read the first line (the admission), then close the pipe.
    const first = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        out += c;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    expect(JSON.parse(first)).toMatchObject({ admission: 'started' });
    const closed = new Promise<void>((resolve) => child.stdout.once('close', () => resolve()));
    child.stdout.destroy();
    await closed;
    release();

    expect({ code: await exited, stderr }).toEqual({ code: 0, stderr: '' });
  });
});

function cleanEnv(): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(clean)) if (name.startsWith('OPENBOT_')) delete clean[name];
  return clean;
}
