import {
  events as ev,
  FakeAnthropicServer,
  rawReply,
  silentReply,
  sse,
  statusReply,
  streamReply,
  textReply,
  toolUseReply,
} from '../../../../test/fakes/fake-anthropic-server';
import { collect, failureOf } from '../../../../test/support/model-streams';
import type { ChatMessage, ToolDefinition } from '../model/chat';
import { runTurn, type TurnEvent } from '../host/in-memory-host';
import type { LocalTool } from '../turn/tool-step';
import { AnthropicProvider, toAnthropicMessages } from './anthropic';

const WEATHER: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('AnthropicProvider against a local Messages API server', () => {
  let server: FakeAnthropicServer;
  let provider: AnthropicProvider;

  beforeEach(async () => {
    server = await FakeAnthropicServer.start();
    provider = new AnthropicProvider({ baseUrl: server.baseUrl, apiKey: 'sk-ant-test', firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000 });
  });
  afterEach(() => server.close());

  const request = (messages: ChatMessage[] = [{ role: 'user', content: 'hi' }], tools: ToolDefinition[] = []) => ({
    model: 'claude-test',
    messages,
    tools,
    idempotencyKey: 'turn-1:step-1',
  });

  it('POSTs /messages with x-api-key, anthropic-version, Idempotency-Key, system, input_schema tools and merged tool results', async () => {
    server.enqueue(textReply(['ok']));
    const history: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Answer in English.' },
      { role: 'user', content: 'Weather in Oslo and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          { callId: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { callId: 'toolu_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', content: '3°C, rain', toolCallId: 'toolu_1' },
      { role: 'tool', content: '18°C, sun', toolCallId: 'toolu_2' },
      { role: 'assistant', content: '', toolCalls: [{ callId: 'toolu_3', name: 'get_weather', arguments: '' }] },
      { role: 'tool', content: 'error: city is required', toolCallId: 'toolu_3' },
    ];
    await collect(provider.stream(request(history, [WEATHER])));

    const [sent] = server.requests;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers['idempotency-key']).toBe('turn-1:step-1');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      system: 'Be brief.\n\nAnswer in English.',
      messages: [
        { role: 'user', content: 'Weather in Oslo and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C, rain' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: '18°C, sun' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_3', name: 'get_weather', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_3', content: 'error: city is required' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Current weather of a city', input_schema: WEATHER.parameters }],
    });
  });

  it('uses the max_tokens option and leaves out system, tools and keys that are absent', async () => {
    server.enqueue(textReply(['ok']));
    const bare = new AnthropicProvider({ baseUrl: `${server.baseUrl}/`, maxTokens: 256 });
    await collect(bare.stream({ model: 'claude-test', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    const [sent] = server.requests;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBeUndefined();
    expect(sent.headers['idempotency-key']).toBeUndefined();
    expect(sent.body).toEqual({ model: 'claude-test', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('does not merge tool results across an intervening user message', () => {
    expect(
      toAnthropicMessages([
        { role: 'tool', content: 'a', toolCallId: 't1' },
        { role: 'user', content: 'and?' },
        { role: 'tool', content: 'b', toolCallId: 't2' },
      ]),
    ).toEqual([
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a' }] },
      { role: 'user', content: 'and?' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'b' }] },
    ]);
  });

  it('streams text deltas, ignores pings, and reports usage from message_start and message_delta before finish', async () => {
    server.enqueue(textReply(['Hel', 'lo', ' there.'], [25, 7]));
    expect(await collect(provider.stream(request()))).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'text', text: ' there.' },
      { type: 'usage', inputTokens: 25, outputTokens: 7 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('assembles tool_use input from input_json_delta fragments split across chunks, per block index', async () => {
    server.enqueue(
      streamReply([
        ev.messageStart(40),
        ev.textStart(0),
        ev.text(0, 'Let me check.'),
        ev.blockStop(0),
        ev.toolStart(1, 'toolu_a', 'get_weather'),
        ev.toolJson(1, ''),
        ev.toolJson(1, '{"ci'),
        ev.toolJson(1, 'ty": "Os'),
        ev.toolJson(1, 'lo"}'),
        ev.blockStop(1),
        ev.toolStart(2, 'toolu_b', 'get_time'),
        ev.blockStop(2),
        ev.messageDelta('tool_use', 31),
        ev.messageStop(),
      ]),
    );
    expect(await collect(provider.stream(request()))).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool-call', callId: 'toolu_a', name: 'get_weather', arguments: '{"city": "Oslo"}' },
      { type: 'tool-call', callId: 'toolu_b', name: 'get_time', arguments: '{}' },
      { type: 'usage', inputTokens: 40, outputTokens: 31 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('decodes SSE events split at arbitrary byte positions with CRLF line ends', async () => {
    const wire = [ev.messageStart(3), ev.textStart(0), ev.text(0, 'Hi'), ev.blockStop(0), ev.messageDelta('end_turn', 1), ev.messageStop()]
      .map(sse)
      .join('')
      .replace(/\n/g, '\r\n');
    const cuts = [7, 60, 61, 150, 300, wire.length - 3];
    const pieces = cuts.map((cut, i) => wire.slice(i === 0 ? 0 : cuts[i - 1], cut)).concat(wire.slice(cuts.at(-1)));
    server.enqueue(rawReply(pieces));
    expect(await collect(provider.stream(request()))).toEqual([
      { type: 'text', text: 'Hi' },
      { type: 'usage', inputTokens: 3, outputTokens: 1 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('reports no usage when the stream gave none (unknown, never 0)', async () => {
    server.enqueue(textReply(['no usage']));
    const out = await collect(provider.stream(request()));
    expect(out.some((event) => event.type === 'usage')).toBe(false);
    expect(out.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('counts cache writes and reads as input tokens, the reads also as the cached part', async () => {
    server.enqueue(
      streamReply([
        { type: 'message_start', message: { usage: { input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 20, output_tokens: 1 } } },
        ev.messageDelta('end_turn', 9),
        ev.messageStop(),
      ]),
    );
    expect(await collect(provider.stream(request()))).toEqual([
      { type: 'usage', inputTokens: 125, outputTokens: 9, cachedInputTokens: 20 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
  ])('maps stop_reason %s to %s', async (stopReason, reason) => {
    server.enqueue(streamReply([ev.messageStart(1), ev.messageDelta(stopReason, 1), ev.messageStop()]));
    expect((await collect(provider.stream(request()))).at(-1)).toEqual({ type: 'finish', reason });
  });

  it.each([
    ['overloaded_error', 'unavailable', true],
    ['api_error', 'unavailable', true],
    ['rate_limit_error', 'rate-limited', true],
    ['invalid_request_error', 'invalid-request', false],
  ])('maps an in-stream error event of type %s to %s after the partial text', async (errorType, category, safe) => {
    server.enqueue(streamReply([ev.messageStart(1), ev.textStart(0), ev.text(0, 'partial'), ev.error(errorType, 'boom')]));
    const { failure, before } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe(category);
    expect(failure.safeToRetry).toBe(safe);
    expect(before).toEqual([{ type: 'text', text: 'partial' }]);
  });

  it('maps HTTP 429 to rate-limited with Retry-After', async () => {
    server.enqueue(statusReply(429, 'rate_limit_error', 'Number of request tokens has exceeded your rate limit', { 'retry-after': '11' }));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('rate-limited');
    expect(failure.retryAfterSeconds).toBe(11);
    expect(failure.safeToRetry).toBe(true);
  });

  it.each([529, 500, 503])('maps HTTP %i to unavailable', async (status) => {
    server.enqueue(statusReply(status, status === 529 ? 'overloaded_error' : 'api_error', 'Overloaded'));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('unavailable');
    expect(failure.options.status).toBe(status);
    expect(failure.safeToRetry).toBe(true);
  });

  it('maps a 400 "prompt is too long" to context-too-long', async () => {
    server.enqueue(statusReply(400, 'invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum'));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('context-too-long');
    expect(failure.safeToRetry).toBe(false);
  });

  it.each([400, 401, 403, 404, 413])('maps other HTTP %i to invalid-request', async (status) => {
    server.enqueue(statusReply(status, 'invalid_request_error', 'messages: roles must alternate'));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('invalid-request');
    expect(failure.safeToRetry).toBe(false);
  });

  it('[ERR-01] keeps what the provider answered as a safe detail: status, error type and first line, a key in it scrubbed; an in-stream error has no status', async () => {
    server.enqueue(statusReply(401, 'authentication_error', 'invalid x-api-key sk-ant-api03-AbCdEf0123456789xyz\nsecond line'));
    expect((await failureOf(provider.stream(request()))).failure.detail).toEqual({ status: 401, code: 'authentication_error', message: 'invalid x-api-key [redacted]' });
    server.enqueue(streamReply([ev.messageStart(1), ev.error('overloaded_error', 'Overloaded')]));
    expect((await failureOf(provider.stream(request()))).failure.detail).toEqual({ status: null, code: 'overloaded_error', message: 'Overloaded' });
  });

  it('maps a refused connection to unavailable', async () => {
    const url = server.baseUrl;
    await server.close();
    const offline = new AnthropicProvider({ baseUrl: url });
    expect((await failureOf(offline.stream(request()))).failure.category).toBe('unavailable');
    server = await FakeAnthropicServer.start();
  });

  it('maps a connection dropped mid-stream to unavailable after the partial text', async () => {
    server.enqueue(
      streamReply([ev.messageStart(5), ev.textStart(0), ev.text(0, 'partial'), ev.text(0, ' more'), ev.blockStop(0), ev.messageDelta('end_turn', 2), ev.messageStop()], {
        dropAfter: 3,
      }),
    );
    const { failure, before } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('unavailable');
    expect(before).toEqual([{ type: 'text', text: 'partial' }]);
  });

  it('treats a body that ends before any stop reason as unavailable, and does not emit a half-built tool call', async () => {
    server.enqueue(streamReply([ev.messageStart(5), ev.toolStart(0, 'toolu_x', 'get_weather'), ev.toolJson(0, '{"city":')]));
    const { failure, before } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('unavailable');
    expect(before).toEqual([]);
  });

  it('times out a stream that stalls after the first events (idle timeout)', async () => {
    const impatient = new AnthropicProvider({ baseUrl: server.baseUrl, firstByteTimeoutMs: 2_000, idleTimeoutMs: 150 });
    server.enqueue(streamReply([ev.messageStart(5), ev.textStart(0), ev.text(0, 'started'), ev.text(0, 'never')], { stallAfter: 3 }));
    const { failure, before } = await failureOf(impatient.stream(request()));
    expect(failure.category).toBe('timeout');
    expect(failure.safeToRetry).toBe(true);
    expect(before).toEqual([{ type: 'text', text: 'started' }]);
  });

  it('times out a server that never answers (first-byte timeout)', async () => {
    const impatient = new AnthropicProvider({ baseUrl: server.baseUrl, firstByteTimeoutMs: 150, idleTimeoutMs: 5_000 });
    server.enqueue(silentReply());
    expect((await failureOf(impatient.stream(request()))).failure.category).toBe('timeout');
  });

  it('passes a caller abort through instead of calling it a provider failure', async () => {
    server.enqueue(silentReply());
    const controller = new AbortController();
    const reason = new Error('caller stopped');
    setTimeout(() => controller.abort(reason), 50);
    await expect(collect(provider.stream({ ...request(), signal: controller.signal }))).rejects.toBe(reason);
  });

  it('the fake serves its fallback reply, slowly with delayMs, once the script is empty', async () => {
    server.fallback = textReply(['slow'], [3, 1], { delayMs: 20 });
    const answers = await Promise.all(['k-1', 'k-2'].map((key) => collect(provider.stream({ ...request(), idempotencyKey: key }))));
    await server.waitForRequests(2);
    for (const events of answers) expect(events.filter((event) => event.type === 'text')).toEqual([{ type: 'text', text: 'slow' }]);
    expect([...server.keys()].sort()).toEqual(['k-1', 'k-2']);
  });
});

describe('runTurn through the anthropic adapter', () => {
  let server: FakeAnthropicServer;
  beforeEach(async () => {
    server = await FakeAnthropicServer.start();
  });
  afterEach(() => server.close());

  it('runs model step → tool step → model step, sending the tool result back as a tool_result block', async () => {
    const seen: unknown[] = [];
    const weather: LocalTool = {
      definition: WEATHER,
      handler: ({ arguments: args }) => {
        seen.push(args);
        return { modelOutput: '3°C, rain' };
      },
    };
    const turnEvents: TurnEvent[] = [];
    server.enqueue(toolUseReply('toolu_1', 'get_weather', ['{"ci', 'ty":', '"Oslo"}'], [50, 10]), textReply(['It is ', '3°C in Oslo.'], [80, 8]));

    const result = await runTurn({
      provider: new AnthropicProvider({ baseUrl: server.baseUrl, apiKey: 'sk-ant-test', firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000 }),
      model: 'claude-test',
      instructions: 'Be brief.',
      tools: [weather],
      history: [],
      input: 'Weather in Oslo?',
      maxSteps: 4,
      idempotencyKey: 'turn-1',
      onEvent: (event) => void turnEvents.push(event),
    });

    expect(seen).toEqual([{ city: 'Oslo' }]);
    expect(result.text).toBe('It is 3°C in Oslo.');
    expect(result.usage).toEqual({ inputTokens: 130, outputTokens: 18 });
    expect(result.steps).toBe(2);
    expect(result.stopReason).toBe('stop');
    expect(result.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [{ callId: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', content: '3°C, rain', toolCallId: 'toolu_1' },
      { role: 'assistant', content: 'It is 3°C in Oslo.' },
    ]);
    expect(turnEvents.filter((event) => event.type === 'text.delta')).toEqual([
      { type: 'text.delta', step: 2, attempt: 1, text: 'It is ' },
      { type: 'text.delta', step: 2, attempt: 1, text: '3°C in Oslo.' },
    ]);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['turn-1:step-1', 'turn-1:step-2']);
    expect(server.requests[1].body.system).toBe('Be brief.');
    expect(server.requests[1].body.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3°C, rain' }] },
    ]);
  });
});
