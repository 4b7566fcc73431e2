import { OpenbotTracing } from '@openbot/platform';
import { noSpan } from '@openbot/engine';
import { trace } from '@opentelemetry/api';
import { textReply, toolCallReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, eventsUntilEnd, sendMessage } from '../support/chat-fixture';
import { OtlpReceiver } from '../support/otlp-receiver';
import { startTestApp, type TestApp } from '../support/test-app';

const PROVIDER_KEY = 'sk-provider-key-1b7c9e';
const VAULT_TOKEN = 'vault-tool-token-4f2a8d';
const PROMPT = 'my private question about purple elephants';
const TOOL_ARGUMENTS = '{"q":"confidential-lookup-term"}';
const TOOL_ANSWER = 'tool-answer-with-account-9931';
const REPLY = 'The elephants are fine';

describe('traces (docs/decisions/040-traces.md)', () => {
  let t: TestApp;
  let receiver: OtlpReceiver;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
    t = await startTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'openbot-test' } });
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
    await tools?.close();
    await receiver?.close();
  });

  it('one Turn through the HTTP API: a span per request (route pattern), per phase (in the execution\'s trace), per model and tool call (GenAI attributes), and no secret or content in any', async () => {
    const org = await t.createOrganization('Traced');
    const auth = bearer(org.secret);
    const vault = await t.http().post('/v1/vaults').set('authorization', auth).send({ name: 'keys' }).expect(201);
    const vaultId = (vault.body as { id: string }).id;
    const item = await t.http().post(`/v1/vaults/${vaultId}/items`).set('authorization', auth).send({ name: 'tool', fields: { token: VAULT_TOKEN }, allowedHosts: [new URL(tools.url()).host] }).expect(201);
    const itemId = (item.body as { id: string }).id;
    await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'fake', kind: 'openai-compatible', baseUrl: model.baseUrl, apiKey: PROVIDER_KEY }).expect(201);
    const tool = {
      name: 'lookup',
      description: 'Looks up',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      kind: 'http',
      url: tools.url(),
      headers: { authorization: { vaultItemId: itemId, field: 'token' } },
    };
    const bot = await t.http().post('/v1/bots').set('authorization', auth).send({ name: 'Bot', model: 'fake/gpt-test', instructions: 'Be brief.', tools: [tool] }).expect(201);
    const chat = await t.http().post('/v1/chats').set('authorization', auth).send({ botId: (bot.body as { id: string }).id }).expect(201);
    const chatId = (chat.body as { id: string }).id;

    model.enqueue(toolCallReply('c1', 'lookup', [TOOL_ARGUMENTS], [20, 5]), textReply([REPLY], [30, 4]));
    tools.enqueue(jsonReply(200, { text: TOOL_ANSWER }));
    const admitted = await sendMessage(t, org.secret, chatId, PROMPT);
    const events = await eventsUntilEnd(t, org.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    // The secrets really went out (so their absence from the spans means something).
    expect(JSON.stringify(model.requests)).toContain(PROVIDER_KEY);
    expect(JSON.stringify(tools.requests)).toContain(VAULT_TOKEN);
    await t.app.get(OpenbotTracing).flush();

    expect(receiver.contentTypes.every((c) => c.startsWith('application/json'))).toBe(true);
    const spans = receiver.spans();
    const executionTrace = admitted.executionId.replace(/-/g, '');

    // The request that admitted the Turn: named by its route pattern, never the raw path.
    const post = spans.find((s) => s.name === 'POST /v1/chats/:id/messages');
    expect(post?.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/chats/:id/messages', 'http.response.status_code': 202 });
    expect(spans.filter((s) => s.name.includes(chatId))).toEqual([]);

    // Phase runs: in the execution's own trace (its ID is the execution ID), with its ID and generation.
    const phases = spans.filter((s) => s.attributes['openbot.execution.id'] === admitted.executionId && s.attributes['openbot.phase'] !== undefined);
    expect(phases.length).toBeGreaterThanOrEqual(2);
    for (const phase of phases) {
      expect(phase.traceId).toBe(executionTrace);
      expect(phase.attributes).toMatchObject({ 'openbot.workflow': 'chat.turn', 'openbot.execution.generation': 1, 'openbot.phase.outcome': 'succeeded' });
    }

    // Model calls: GenAI conventions, children of their phase's span.
    const modelCalls = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(modelCalls.map((s) => s.name)).toEqual(['chat gpt-test', 'chat gpt-test']);
    expect(modelCalls.map((s) => [s.attributes['gen_ai.usage.input_tokens'], s.attributes['gen_ai.usage.output_tokens']])).toEqual([
      [20, 5],
      [30, 4],
    ]);
    for (const call of modelCalls) {
      expect(call.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-test',
        'openbot.call.kind': 'model',
        'openbot.call.attempt': 1,
        'openbot.execution.id': admitted.executionId,
      });
      expect(call.traceId).toBe(executionTrace);
      expect(phases.map((p) => p.spanId)).toContain(call.parentSpanId);
    }

    // The tool call: its own span, a child of a phase.
    const toolCall = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(toolCall).toMatchObject({ name: 'execute_tool lookup', traceId: executionTrace });
    expect(toolCall?.attributes).toMatchObject({ 'gen_ai.tool.name': 'lookup', 'gen_ai.tool.call.id': 'c1', 'openbot.call.kind': 'tool', 'openbot.tool.served_by': 'http' });
    expect(phases.map((p) => p.spanId)).toContain(toolCall?.parentSpanId);

    // Every span is one of ours: a request, a phase or an outside call. No library traces its own
    // work into the backend (pg-boss would add a span in a trace of its own for every job).
    const foreign = spans.filter((s) => s.attributes['http.route'] === undefined && s.attributes['openbot.execution.id'] === undefined);
    expect(foreign.map((s) => s.name)).toEqual([]);

    // Nothing anywhere in what left the node: no key, no Vault value, no prompt, arguments, answer or reply, no admin token.
    const everything = receiver.bodies.join('\n');
    for (const secret of [PROVIDER_KEY, VAULT_TOKEN, PROMPT, 'confidential-lookup-term', TOOL_ANSWER, REPLY, org.secret, t.adminToken, t.config.masterKey.key.toString('base64')]) {
      expect({ secret, leaked: everything.includes(secret) }).toEqual({ secret, leaked: false });
    }
  });
});

describe('traces off (decision 040)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('without an OTLP endpoint no tracer is registered and every span is the shared no-op', async () => {
    const tracing = t.app.get(OpenbotTracing);
    expect(tracing.enabled).toBe(false);
    expect(tracing.startPhase({ executionId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', workflow: 'w', phase: 'p', step: 1, generation: 1 })).toBe(noSpan);
    // The global API still holds its no-op provider: nothing was started.
    expect(trace.getTracer('probe').startSpan('x').isRecording()).toBe(false);
    await tracing.flush();
  });
});
