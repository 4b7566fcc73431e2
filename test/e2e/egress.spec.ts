import { Global, Module } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EGRESS_HOST_LOOKUP } from '../../libs/platform/src/egress/egress.module';
import { REFUSED_DESTINATION, type HostLookup } from '../../libs/platform/src/egress/egress-policy';
import { SealedRecords } from '../../libs/platform/src/sealing/sealed-records';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Egress end to end (decision 016): DNS rebinding stopped on a real HTTP tool call and a real
 * provider call, and the refusal's resolved address kept only in the sealed cause.
 *
 * The app's resolver is scripted (EGRESS_HOST_LOOKUP). A rebinding name first answers 127.0.0.2
 * — the one address the allow list admits, standing in for a public address yet connectable
 * without a network — then 127.0.0.1, where an "internal service" counts every request it gets.
 * The tool's name is `localhost` on purpose: a client that resolved the host again when it
 * connects would get the system's answer (127.0.0.1) and reach the internal service.
 */

/** Each name's answers in turn; the last one repeats (a TTL-0 record that changed). */
class ScriptedDns {
  private readonly answers = new Map<string, string[]>();
  readonly lookup: HostLookup = (host) => {
    const list = this.answers.get(host);
    if (list === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
    const address = list.length > 1 ? list.shift()! : list[0]!;
    return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
  };

  set(host: string, ...answers: string[]): void {
    this.answers.set(host, answers);
  }
}

const dns = new ScriptedDns();

@Global()
@Module({ providers: [{ provide: EGRESS_HOST_LOOKUP, useValue: dns.lookup }], exports: [EGRESS_HOST_LOOKUP] })
class ScriptedDnsModule {}

/** The internal service on 127.0.0.1 (and ::1) at `port`: it must never be reached. */
async function internalService(port: number): Promise<{ hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const servers: Server[] = [];
  for (const host of ['127.0.0.1', '::1']) {
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"modelOutput":"internal secrets"}');
    });
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false)); // no IPv6 loopback here
      server.listen(port, host, () => resolve(true));
    });
    if (listening) servers.push(server);
  }
  return {
    hits,
    close: async () => {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

describe('egress', () => {
  let t: TestApp;
  const closing: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    // Exactly this list: the development loopback default must not hide a rebinding bug.
    t = await startTestApp({ imports: [ScriptedDnsModule], env: { OPENBOT_EGRESS_ALLOW: 'models.test,127.0.0.2' } });
  });
  afterAll(async () => {
    for (const server of closing.splice(0)) await server.close();
    await t?.close();
  });

  it('security: an HTTP tool whose name rebinds from an allowed address to 127.0.0.1 never reaches the loopback service, and the model is not told the address', async () => {
    const model = await FakeOpenAiServer.start();
    closing.push(model);
    dns.set('models.test', '127.0.0.1');
    const tool = await FakeToolServer.start({ host: '127.0.0.2' });
    closing.push(tool);
    const internal = await internalService(tool.port);
    closing.push(internal);
    dns.set('localhost', '127.0.0.2', '127.0.0.1');

    const chat = await createChatFixture(t, {
      baseUrl: `http://models.test:${model.port}/v1`,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object' }, kind: 'http', url: `http://localhost:${tool.port}/lookup` }],
    });
    tool.enqueue(jsonReply(200, { modelOutput: 'public answer' }));
    model.enqueue(
      toolCallReply('call_1', 'lookup', ['{}'], [5, 5]),
      textReply(['ok'], [5, 1]),
      toolCallReply('call_2', 'lookup', ['{}'], [5, 5]),
      textReply(['ok'], [5, 1]),
    );

    const first = await sendMessage(t, chat.secret, chat.chatId, 'Look it up');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const second = await sendMessage(t, chat.secret, chat.chatId, 'Again');
    const events = await eventsUntilEnd(t, chat.secret, second.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });

    // The first call went to the checked address, with the original Host; the second was refused before sending.
    expect(tool.requests).toEqual([expect.objectContaining({ path: '/lookup', headers: expect.objectContaining({ host: `localhost:${tool.port}` }) })]);
    expect(internal.hits).toEqual([]);
    const toolMessages = model.requests.map((r) => (r.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool').at(-1)?.content);
    expect(toolMessages[1]).toBe('public answer');
    expect(toolMessages[3]).toContain(`localhost:${tool.port} ${REFUSED_DESTINATION}`);
    expect(toolMessages[3]).not.toContain('loopback');
    expect(toolMessages[3]).not.toContain('127.0.0.1');
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ isError: true });
  });

  it('security: [ERR-01] a provider whose name rebinds to 127.0.0.1 is refused at call time; the resolved address is only in the sealed cause', async () => {
    const model = await FakeOpenAiServer.start({ host: '127.0.0.2' });
    closing.push(model);
    const internal = await internalService(model.port);
    closing.push(internal);
    // Configuration check, first call: the allowed address; then the rebound one.
    dns.set('llm.test', '127.0.0.2', '127.0.0.2', '127.0.0.1');
    const chat = await createChatFixture(t, { baseUrl: `http://llm.test:${model.port}/v1` });
    model.enqueue(textReply(['hello'], [3, 1]));

    const first = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    expect((await eventsUntilEnd(t, chat.secret, first.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const second = await sendMessage(t, chat.secret, chat.chatId, 'Hi again');
    const events = await eventsUntilEnd(t, chat.secret, second.executionId);

    expect(model.requests).toHaveLength(1);
    expect(internal.hits).toEqual([]);
    expect(events.find((e) => e.type === 'model.failed')).toMatchObject({ category: 'invalid-request', retrying: false });
    const end = events.at(-1)!;
    expect(end).toMatchObject({ state: 'failed', errorId: expect.any(String) });
    expect(JSON.stringify(events)).not.toContain('127.0.0.1');
    const [record] = await t.database.query<{ cause_id: string }>('SELECT cause_id FROM error_records WHERE id = $1', [end.errorId]);
    const sealed = await t.app.get(SealedRecords).get(record!.cause_id as never);
    expect(JSON.stringify(sealed?.value)).toContain('llm.test resolved to 127.0.0.1');
  });

  it('security: an endless OpenID discovery document is read only up to OPENBOT_EGRESS_DOCUMENT_LIMIT: the login is 503 unavailable, the sealed cause says why', async () => {
    const idp = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"issuer":"');
      const chunk = 'i'.repeat(16 * 1024);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.2', resolve));
    closing.push({
      close: async () => {
        idp.closeAllConnections();
        await new Promise<void>((resolve) => idp.close(() => resolve()));
      },
    });
    const org = await t.createOrganization('Endless IdP');
    const issuer = `http://127.0.0.2:${(idp.address() as AddressInfo).port}`;
    await t
      .http()
      .put('/v1/sso')
      .set('authorization', `Bearer ${org.secret}`)
      .send({ issuer, clientId: 'c', clientSecret: 's', allowedDomains: ['example.com'], defaultRole: 'member' })
      .expect(200);
    const res = await t.http().get(`/v1/sso/${org.organizationId}/login`);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ type: 'RequestFailed', category: 'unavailable' });
    const [record] = await t.database.query<{ cause_id: string }>('SELECT cause_id FROM error_records WHERE id = $1', [(res.body as { errorId: string }).errorId]);
    const sealed = await t.app.get(SealedRecords).get(record!.cause_id as never);
    expect(JSON.stringify(sealed?.value)).toContain(`the discovery document of ${issuer} is larger than 65536 bytes`);
  });

  it('security: a tool answer over OPENBOT_TOOL_ANSWER_LIMIT is not read: the model gets a clear error result', async () => {
    const model = await FakeOpenAiServer.start();
    closing.push(model);
    dns.set('models.test', '127.0.0.1');
    const tool = await FakeToolServer.start({ host: '127.0.0.2' });
    closing.push(tool);
    const chat = await createChatFixture(t, {
      baseUrl: `http://models.test:${model.port}/v1`,
      tools: [{ name: 'dump', description: 'Dumps', parameters: { type: 'object' }, kind: 'http', url: `http://127.0.0.2:${tool.port}/dump` }],
    });
    tool.enqueue((res) => {
      // 2 MiB, streamed without a Content-Length: the cap is counted while reading.
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 32; i++) res.write(chunk);
      res.end();
    });
    model.enqueue(toolCallReply('call_big', 'dump', ['{}'], [5, 5]), textReply(['too big'], [5, 1]));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Dump it');
    expect((await eventsUntilEnd(t, chat.secret, turn.executionId)).at(-1)).toMatchObject({ state: 'completed' });
    const toolMessage = (model.requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('Error: the answer of tool "dump" is larger than 1048576 bytes.');
  });

  it('security: a refusal reads the same whether the name resolves to loopback, to a private address, to a link-local one or not at all; why is only in the server log', async () => {
    const acme = await t.createOrganization('Egress oracle');
    dns.set('db.corp.test', '127.0.0.1');
    dns.set('wiki.corp.test', '10.20.30.40');
    dns.set('meta.corp.test', '169.254.169.254');
    const messages = new Map<string, string>();
    for (const host of ['db.corp.test', 'wiki.corp.test', 'meta.corp.test', 'nothing.corp.test']) {
      const res = await t.http().post('/v1/model-providers').set('authorization', bearer(acme.secret)).send({ name: `probe ${host}`, kind: 'openai-compatible', baseUrl: `http://${host}/v1` });
      expect(res.status).toBe(400);
      const issues = (res.body as { issues: Array<{ path: string; message: string }> }).issues;
      expect(issues.map((i) => i.path)).toEqual(['baseUrl']);
      messages.set(host, issues[0]!.message);
    }
    expect(new Set(messages.values())).toEqual(new Set([`baseUrl ${REFUSED_DESTINATION}`]));
    // The operator still learns why, from the log.
    const logged = t.logs.filter((line) => line.includes('egress refused'));
    expect(logged.some((line) => line.includes('wiki.corp.test resolved to 10.20.30.40'))).toBe(true);
    expect(logged.some((line) => line.includes('nothing.corp.test does not resolve'))).toBe(true);
  });
});

