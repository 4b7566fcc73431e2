import {
  chunks,
  FakeOpenAiServer,
  statusReply,
  streamReply,
  textReply,
  toolCallReply,
} from '../../../../test/fakes/fake-openai-server';
import { runTurn, type RunTurnOptions, type TurnEvent } from '../host/in-memory-host';
import type { ChatMessage } from '../model/chat';
import { ModelFailure } from '../model/model-provider';
import type { LocalTool } from '../turn/tool-step';
import { OpenAiCompatibleProvider } from './openai-compatible';

const weather = (modelOutput: string, seen: unknown[] = []): LocalTool => ({
  definition: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  handler: ({ arguments: args }) => {
    seen.push(args);
    return { modelOutput };
  },
});

describe('in-memory host: a whole Turn through libs/core alone', () => {
  let server: FakeOpenAiServer;
  let events: TurnEvent[];
  let delays: number[];

  beforeEach(async () => {
    server = await FakeOpenAiServer.start();
    events = [];
    delays = [];
  });
  afterEach(() => server.close());

  const turn = (overrides: Partial<RunTurnOptions> = {}) =>
    runTurn({
      provider: new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000 }),
      model: 'gpt-test',
      tools: [],
      history: [],
      input: 'hello',
      maxSteps: 4,
      idempotencyKey: 'turn-1',
      onEvent: (event) => void events.push(event),
      sleep: async (ms) => void delays.push(ms),
      ...overrides,
    });

  it('[PLAT-02] [EXE-06] runs model step → tool step → model step over the real openai-compatible adapter, without PostgreSQL', async () => {
    const toolArgs: unknown[] = [];
    server.enqueue(toolCallReply('call_1', 'get_weather', ['{"ci', 'ty":', '"Oslo"}'], [50, 10]), textReply(['It is ', '3°C in Oslo.'], [80, 8]));
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
    ];

    const result = await turn({ instructions: 'Be brief.', history, input: 'Weather in Oslo?', tools: [weather('3°C, rain', toolArgs)] });

    expect(toolArgs).toEqual([{ city: 'Oslo' }]);
    expect(result.messages).toEqual([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [{ callId: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', content: '3°C, rain', toolCallId: 'call_1' },
      { role: 'assistant', content: 'It is 3°C in Oslo.' },
    ]);
    expect(result.text).toBe('It is 3°C in Oslo.');
    expect(result.usage).toEqual({ inputTokens: 130, outputTokens: 18 });
    expect(result.callsWithoutUsage).toBe(0);
    expect(result.steps).toBe(2);
    expect(result.stopReason).toBe('stop');
    expect(events).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.completed', step: 1, attempt: 1, usage: { inputTokens: 50, outputTokens: 10 } },
      { type: 'tool.called', step: 1, callId: 'call_1', name: 'get_weather' },
      { type: 'tool.result', step: 1, callId: 'call_1' },
      { type: 'model.started', step: 2, attempt: 1 },
      { type: 'text.delta', step: 2, attempt: 1, text: 'It is ' },
      { type: 'text.delta', step: 2, attempt: 1, text: '3°C in Oslo.' },
      { type: 'model.completed', step: 2, attempt: 1, usage: { inputTokens: 80, outputTokens: 8 } },
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1].body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Weather in Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '3°C, rain' },
    ]);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['turn-1:step-1', 'turn-1:step-2']);
  });

  it('[EXE-06] the in-memory host keeps nothing between Turns: a second Turn sees only the history its caller passes', async () => {
    server.enqueue(textReply(['first answer']), textReply(['second answer']));
    const first = await turn({ input: 'one' });
    expect(first.text).toBe('first answer');
    // No recovery promise and no hidden state: without the first Turn's messages, the model never sees them.
    const second = await turn({ input: 'two', history: [] });
    expect(second.text).toBe('second answer');
    expect(server.requests[1].body.messages).toEqual([{ role: 'user', content: 'two' }]);
  });

  it('[STC-09] the tool result modelOutput is exactly what the next model request sends', async () => {
    const modelOutput = 'MODEL-OUTPUT: 3°C, rain\n(line two)';
    server.enqueue(toolCallReply('call_9', 'get_weather', ['{"city":"Rome"}']), textReply(['done']));
    await turn({ tools: [weather(modelOutput)] });
    const toolMessages = (server.requests[1].body.messages as { role: string }[]).filter((m) => m.role === 'tool');
    expect(toolMessages).toEqual([{ role: 'tool', tool_call_id: 'call_9', content: modelOutput }]);
  });

  it('[CALL-04] a dropped stream is retried as attempt 2 with a new model.started; the final text is only attempt 2', async () => {
    server.enqueue(
      streamReply([chunks.role(), chunks.text('Partial answ'), chunks.text('er from attempt 1'), chunks.finish('stop')], { dropAfter: 3 }),
      textReply(['Full ', 'answer.'], [12, 3]),
    );

    const result = await turn();

    expect(result.text).toBe('Full answer.');
    expect(result.messages.filter((m) => m.role === 'assistant')).toEqual([{ role: 'assistant', content: 'Full answer.' }]);
    expect(events).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'text.delta', step: 1, attempt: 1, text: 'Partial answ' },
      { type: 'text.delta', step: 1, attempt: 1, text: 'er from attempt 1' },
      { type: 'model.failed', step: 1, attempt: 1, category: 'unavailable', retrying: true },
      { type: 'model.started', step: 1, attempt: 2 },
      { type: 'text.delta', step: 1, attempt: 2, text: 'Full ' },
      { type: 'text.delta', step: 1, attempt: 2, text: 'answer.' },
      { type: 'model.completed', step: 1, attempt: 2, usage: { inputTokens: 12, outputTokens: 3 } },
    ]);
    // docs/http-api.md: the reply is the concatenation of the last attempt's text.delta texts.
    const lastAttempt = events.filter((e): e is Extract<TurnEvent, { type: 'text.delta' }> => e.type === 'text.delta' && e.attempt === 2);
    expect(lastAttempt.map((e) => e.text).join('')).toBe(result.text);
    // Both attempts carry the same provider idempotency key.
    expect(server.countByKey('turn-1:step-1')).toBe(2);
  });

  it('[CALL-04] a stalled stream times out and is retried as a new attempt', async () => {
    server.enqueue(streamReply([chunks.text('stuck'), chunks.text('never')], { stallAfter: 1 }), textReply(['fresh']));
    const provider = new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, firstByteTimeoutMs: 1_000, idleTimeoutMs: 100 });
    const result = await turn({ provider });
    expect(result.text).toBe('fresh');
    expect(events.filter((e) => e.type === 'model.started')).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.started', step: 1, attempt: 2 },
    ]);
    expect(events).toContainEqual({ type: 'model.failed', step: 1, attempt: 1, category: 'timeout', retrying: true });
  });

  it('usage is null (unknown, not 0) when the provider sends no usage chunk', async () => {
    server.enqueue(textReply(['no usage here']));
    const result = await turn();
    expect(result.usage).toBeNull();
    expect(result.callsWithoutUsage).toBe(1);
    expect(events).toContainEqual({ type: 'model.completed', step: 1, attempt: 1, usage: null });
  });

  it('waits Retry-After on 429 before the next attempt', async () => {
    server.enqueue(statusReply(429, { error: { message: 'slow down' } }, { 'Retry-After': '3' }), textReply(['ok']));
    const result = await turn();
    expect(result.text).toBe('ok');
    expect(delays).toEqual([3_000]);
  });

  it('gives up after maxAttempts safe failures and does not retry unsafe ones', async () => {
    server.enqueue(statusReply(503, {}), statusReply(503, {}), statusReply(503, {}));
    await expect(turn({ maxAttempts: 3 })).rejects.toMatchObject({ category: 'unavailable' });
    expect(server.requests).toHaveLength(3);
    expect(delays).toEqual([100, 200]);

    server.enqueue(statusReply(400, { error: { message: 'bad tool schema' } }));
    await expect(turn()).rejects.toBeInstanceOf(ModelFailure);
    expect(server.requests).toHaveLength(4);
  });

  it('stops at maxSteps when the model keeps calling tools', async () => {
    server.enqueue(toolCallReply('c1', 'get_weather', ['{"city":"A"}']), toolCallReply('c2', 'get_weather', ['{"city":"B"}']));
    const result = await turn({ maxSteps: 2, tools: [weather('sunny')] });
    expect(result.stopReason).toBe('max-steps');
    expect(result.steps).toBe(2);
    expect(server.requests).toHaveLength(2);
    expect(result.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
  });

  it('trims the oldest history to the model limit before calling the model', async () => {
    server.enqueue(textReply(['ok']));
    const history: ChatMessage[] = [
      { role: 'user', content: 'old question '.repeat(100) },
      { role: 'assistant', content: 'old answer '.repeat(100) },
      { role: 'user', content: 'recent' },
      { role: 'assistant', content: 'recent answer' },
    ];
    await turn({ instructions: 'rules', history, input: 'now', limits: { contextTokens: 450, maxOutputTokens: 100 } });
    expect(server.requests[0].body.messages).toEqual([
      { role: 'system', content: 'rules' },
      { role: 'assistant', content: 'old answer '.repeat(100) },
      { role: 'user', content: 'recent' },
      { role: 'assistant', content: 'recent answer' },
      { role: 'user', content: 'now' },
    ]);
  });
});
