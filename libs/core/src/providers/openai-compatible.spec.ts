import {
  chunks,
  FakeOpenAiServer,
  heldStreamReply,
  rawReply,
  silentReply,
  statusReply,
  streamReply,
  textReply,
} from '../../../../test/fakes/fake-openai-server';
import { collect, failureOf } from '../../../../test/support/model-streams';
import type { ChatMessage, ToolDefinition } from '../model/chat';
import { OpenAiCompatibleProvider } from './openai-compatible';
import { parseRetryAfter } from './sse-request';

const WEATHER: ToolDefinition = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('OpenAiCompatibleProvider against a local OpenAI-compatible HTTP server', () => {
  let server: FakeOpenAiServer;
  let provider: OpenAiCompatibleProvider;

  beforeEach(async () => {
    server = await FakeOpenAiServer.start();
    provider = new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, apiKey: 'sk-test', firstByteTimeoutMs: 2_000, idleTimeoutMs: 2_000 });
  });
  afterEach(() => server.close());

  const request = (messages: ChatMessage[] = [{ role: 'user', content: 'hi' }], tools: ToolDefinition[] = []) => ({
    model: 'gpt-test',
    messages,
    tools,
    idempotencyKey: 'turn-1:step-1',
  });

  it('POSTs /chat/completions with streaming, usage, function tools, bearer key and Idempotency-Key', async () => {
    server.enqueue(textReply(['ok']));
    const history: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', toolCalls: [{ callId: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { role: 'tool', content: '3°C, rain', toolCallId: 'call_1' },
    ];
    await collect(provider.stream(request(history, [WEATHER])));

    const [sent] = server.requests;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.headers['idempotency-key']).toBe('turn-1:step-1');
    expect(sent.body).toEqual({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '3°C, rain' },
      ],
      tools: [{ type: 'function', function: WEATHER }],
    });
  });

  it('sends no Authorization header without an API key and no tools field without tools', async () => {
    server.enqueue(textReply(['ok']));
    const anonymous = new OpenAiCompatibleProvider({ baseUrl: `${server.baseUrl}/` });
    await collect(anonymous.stream({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(server.requests[0].headers['idempotency-key']).toBeUndefined();
    expect(server.requests[0].body.tools).toBeUndefined();
  });

  it('streams text deltas, tool calls assembled from fragments by index, usage and finish', async () => {
    server.enqueue(
      streamReply([
        chunks.role(),
        chunks.text('Let me '),
        chunks.text('check.'),
        chunks.toolCallStart(0, 'call_a', 'get_weather'),
        chunks.toolCallStart(1, 'call_b', 'get_weather'),
        chunks.toolCallArgs(0, '{"ci'),
        chunks.toolCallArgs(1, '{"city":'),
        chunks.toolCallArgs(0, 'ty":"Oslo"}'),
        chunks.toolCallArgs(1, '"Rome"}'),
        chunks.finish('tool_calls'),
        chunks.usage(42, 17),
      ]),
    );
    const events = await collect(provider.stream(request()));
    expect(events).toEqual([
      { type: 'text', text: 'Let me ' },
      { type: 'text', text: 'check.' },
      { type: 'tool-call', callId: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'tool-call', callId: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'usage', inputTokens: 42, outputTokens: 17 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('decodes SSE lines split across network writes, CRLF line ends and comments', async () => {
    const a = JSON.stringify(chunks.text('Hel'));
    const b = JSON.stringify(chunks.text('lo'));
    const fin = JSON.stringify(chunks.finish('stop'));
    server.enqueue(rawReply([': keep-alive\r\n\r\n', `data: ${a.slice(0, 10)}`, `${a.slice(10)}\r`, `\n\r\ndata: ${b}\n`, `\ndata: ${fin}\n\ndata: [DO`, 'NE]\n\n']));
    const events = await collect(provider.stream(request()));
    expect(events).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('reports no usage event when the server sends no usage chunk', async () => {
    server.enqueue(textReply(['no usage']));
    const events = await collect(provider.stream(request()));
    expect(events.some((event) => event.type === 'usage')).toBe(false);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('maps finish_reason length', async () => {
    server.enqueue(streamReply([chunks.text('trunc'), chunks.finish('length')]));
    expect((await collect(provider.stream(request()))).at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('maps HTTP 429 to rate-limited with Retry-After', async () => {
    server.enqueue(statusReply(429, { error: { message: 'slow down', type: 'rate_limit_exceeded' } }, { 'Retry-After': '7' }));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('rate-limited');
    expect(failure.retryAfterSeconds).toBe(7);
    expect(failure.safeToRetry).toBe(true);
  });

  it.each([500, 502, 503])('maps HTTP %i to unavailable', async (status) => {
    server.enqueue(statusReply(status, { error: { message: 'down' } }));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('unavailable');
    expect(failure.safeToRetry).toBe(true);
  });

  it('maps a 400 with code context_length_exceeded to context-too-long', async () => {
    server.enqueue(
      statusReply(400, { error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }),
    );
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('context-too-long');
    expect(failure.safeToRetry).toBe(false);
  });

  it('maps a 400 whose message names the context window to context-too-long', async () => {
    server.enqueue(statusReply(400, { error: { message: 'prompt exceeds the context window' } }));
    expect((await failureOf(provider.stream(request()))).failure.category).toBe('context-too-long');
  });

  it.each([400, 401, 404, 422])('maps other HTTP %i to invalid-request', async (status) => {
    server.enqueue(statusReply(status, { error: { message: 'bad', code: 'invalid_value' } }));
    const { failure } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('invalid-request');
    expect(failure.safeToRetry).toBe(false);
  });

  it('[ERR-01] keeps what the provider answered as a safe detail: status, error code and first line, a URL in it scrubbed; a refused connection has none', async () => {
    server.enqueue(statusReply(404, { error: { message: 'The model `gpt-tset` does not exist; see https://docs.llm.test/models', type: 'invalid_request_error', code: 'model_not_found' } }));
    expect((await failureOf(provider.stream(request()))).failure.detail).toEqual({ status: 404, code: 'model_not_found', message: 'The model `gpt-tset` does not exist; see [url]' });
    const url = server.baseUrl;
    await server.close();
    expect((await failureOf(new OpenAiCompatibleProvider({ baseUrl: url }).stream(request()))).failure.detail).toBeUndefined();
    server = await FakeOpenAiServer.start();
  });

  it('maps a refused connection to unavailable', async () => {
    const url = server.baseUrl;
    await server.close();
    const offline = new OpenAiCompatibleProvider({ baseUrl: url });
    expect((await failureOf(offline.stream(request()))).failure.category).toBe('unavailable');
    server = await FakeOpenAiServer.start();
  });

  it('maps a connection dropped mid-stream to unavailable after the partial text', async () => {
    server.enqueue(streamReply([chunks.role(), chunks.text('partial'), chunks.text(' more'), chunks.finish('stop')], { dropAfter: 2 }));
    const { failure, before } = await failureOf(provider.stream(request()));
    expect(failure.category).toBe('unavailable');
    expect(before).toEqual([{ type: 'text', text: 'partial' }]);
  });

  it('treats a body that ends before any finish as unavailable', async () => {
    server.enqueue(streamReply([chunks.text('cut')], { noDone: true }));
    expect((await failureOf(provider.stream(request()))).failure.category).toBe('unavailable');
  });

  it('times out a stream that stalls after the first chunk (idle timeout)', async () => {
    const impatient = new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, firstByteTimeoutMs: 2_000, idleTimeoutMs: 150 });
    server.enqueue(streamReply([chunks.text('started'), chunks.text('never')], { stallAfter: 1 }));
    const { failure, before } = await failureOf(impatient.stream(request()));
    expect(failure.category).toBe('timeout');
    expect(failure.safeToRetry).toBe(true);
    expect(before).toEqual([{ type: 'text', text: 'started' }]);
  });

  it('times out a server that never answers (first-byte timeout)', async () => {
    const impatient = new OpenAiCompatibleProvider({ baseUrl: server.baseUrl, firstByteTimeoutMs: 150, idleTimeoutMs: 5_000 });
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

  it('the fake serves its fallback reply when the script is empty, slowly with delayMs, and waits for requests', async () => {
    server.enqueue(textReply(['scripted']));
    expect(await collect(provider.stream({ ...request(), idempotencyKey: 'k-1' }))).toEqual([
      { type: 'text', text: 'scripted' },
      { type: 'finish', reason: 'stop' },
    ]);

    // role, two texts, finish: four chunks with 40 ms after each.
    server.fallback = textReply(['slow ', 'fallback'], undefined, { delayMs: 40 });
    const second = collect(provider.stream({ ...request(), idempotencyKey: 'k-2' }));
    await server.waitForRequests(2);
    const third = collect(provider.stream({ ...request(), idempotencyKey: 'k-3' }));
    await server.waitForRequests(3);
    const answers = await Promise.all([second, third]);

    for (const events of answers) {
      expect(events).toEqual([
        { type: 'text', text: 'slow ' },
        { type: 'text', text: 'fallback' },
        { type: 'finish', reason: 'stop' },
      ]);
    }
    expect(server.keys()).toEqual(['k-1', 'k-2', 'k-3']);
    expect(server.countByKey('k-2')).toBe(1);
    await expect(server.waitForRequests(4, 50)).rejects.toThrow('expected at least 4 request(s) within 50 ms, received 3');
  });

  it('the fake holds a stream open mid-way until it is released', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.enqueue(
      heldStreamReply([chunks.role(), chunks.text('before'), chunks.text(' after'), chunks.finish('stop')], { holdAfter: 2, release: gate }),
    );
    const stream = provider.stream(request());
    expect((await stream.next()).value).toEqual({ type: 'text', text: 'before' });

    let settled = false;
    const pending = stream.next().finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);

    release();
    expect((await pending).value).toEqual({ type: 'text', text: ' after' });
    expect(await collect(stream)).toEqual([{ type: 'finish', reason: 'stop' }]);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('12')).toBe(12);
    expect(parseRetryAfter(new Date(1_000_000 + 30_000).toUTCString(), 1_000_000)).toBe(30);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
