import {
  OpenbotApiError,
  OpenbotConnectionError,
  createOpenbotClient,
  ReplyText,
  replyText,
  sendMessage,
  streamEvents,
  unwrap,
  type OpenbotClient,
  type ReconnectInfo,
  type StreamItem,
} from '@openbot/client';
import type { AddressInfo } from 'node:net';
import { chunks, heldStreamReply, streamReply, textReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventTypes } from '../support/chat-fixture';

/**
 * The generated client (libs/client) against a real server listening on a port: the main flows
 * of docs/http-api.md typed end to end, its error surface, and `streamEvents` resuming a dropped Server-Sent
 * Events connection with `Last-Event-ID` (EVT-03, RES-03) without a duplicate or a gap.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('libs/client against a listening server', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let baseUrl: string;
  let secret: string;
  let client: OpenbotClient;
  let chatId: string;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    fake = await FakeOpenAiServer.start();

    // Bootstrap with the admin token through the same client (a platform route).
    const admin = createOpenbotClient({ baseUrl, apiKey: t.adminToken });
    const created = await unwrap(admin.POST('/v1/organizations', { body: { name: 'Client Inc' } }));
    expect(created.apiKey.secret).toMatch(/^obk_/);
    secret = created.apiKey.secret;
    client = createOpenbotClient({ baseUrl, apiKey: secret });

    const provider = await unwrap(client.POST('/v1/model-providers', { body: { name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl } }));
    expect(provider).toEqual({ id: expect.stringMatching(UUID), name: 'fake', kind: 'openai-compatible', baseUrl: fake.baseUrl });
    const bot = await unwrap(client.POST('/v1/bots', { body: { name: 'Helper', model: 'fake/gpt-test', instructions: 'Be brief.' } }));
    expect(bot).toMatchObject({ name: 'Helper', model: 'fake/gpt-test', tools: [] });
    const chat = await unwrap(client.POST('/v1/chats', { body: { botId: bot.id } }));
    expect(chat.botId).toBe(bot.id);
    chatId = chat.id;
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  async function collect(executionId: string, options: Parameters<typeof streamEvents>[2] = {}, on?: (item: StreamItem) => void): Promise<StreamItem[]> {
    const items: StreamItem[] = [];
    for await (const item of streamEvents(client, executionId, options)) {
      items.push(item);
      on?.(item);
    }
    return items;
  }

  function expectContiguous(items: readonly StreamItem[]): void {
    const seqs = items.filter((i) => i.seq !== null).map((i) => i.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect(items.at(-1)).toMatchObject({ type: 'execution.ended' });
  }

  it('sends a message with an Idempotency-Key, streams the reply over SSE and lists the messages', async () => {
    fake.enqueue(textReply(['Hel', 'lo ', 'from ', 'the ', 'client'], [10, 5]));
    const admission = await sendMessage(client, chatId, 'Hi there', { idempotencyKey: 'client-e2e-1' });
    expect(admission).toEqual({ messageId: expect.stringMatching(UUID), turnId: expect.stringMatching(UUID), executionId: expect.stringMatching(UUID), admission: 'started' });
    // The same key and body answer the same ids.
    expect(await sendMessage(client, chatId, 'Hi there', { idempotencyKey: 'client-e2e-1' })).toEqual(admission);

    const items = await collect(admission.executionId);
    expectContiguous(items);
    expect(eventTypes(items)).toEqual(['model.started', 'text.delta', 'model.completed', 'execution.ended']);
    expect(items.at(-1)).toMatchObject({ state: 'completed' });
    const deltas = items.flatMap((i) => (i.seq !== null && i.type === 'text.delta' ? [i.text] : []));
    expect(deltas.join('')).toBe('Hello from the client');
    expect(replyText(items)).toBe('Hello from the client');

    const messages = await unwrap(client.GET('/v1/chats/{id}/messages', { params: { path: { id: chatId }, query: { limit: 200 } } }));
    expect(messages.data.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi there'],
      ['assistant', 'Hello from the client'],
    ]);
    expect(messages.next).toBeNull();
    const execution = await unwrap(client.GET('/v1/executions/{id}', { params: { path: { id: admission.executionId } } }));
    expect(execution).toMatchObject({ id: admission.executionId, state: 'completed', resource: { type: 'turn', id: admission.turnId } });

    // A stream opened after the end replays every event from `after`, then ends.
    const tail = await collect(admission.executionId, { after: items.length - 2 });
    expect(tail.map((i) => i.seq)).toEqual([items.length - 1, items.length]);
  });

  it('[EVT-01] ReplyText folds a live stream into the stored reply: the text of an attempt that broke is dropped when the next attempt of its step starts', async () => {
    fake.enqueue(streamReply([chunks.role(), chunks.text('Abandoned '), chunks.text('draft'), chunks.finish('stop')], { dropAfter: 3 }), textReply(['Kept ', 'answer'], [9, 2]));
    const admission = await sendMessage(client, chatId, 'Retry me');
    const reply = new ReplyText();
    const dropped: string[] = [];
    const items = await collect(admission.executionId, {}, (item) => {
      const gone = reply.push(item);
      if (gone !== '') dropped.push(gone);
    });
    expectContiguous(items);
    // The first attempt streamed text that the second one replaced.
    expect(items.filter((i) => i.seq !== null && i.type === 'model.started').map((i) => (i.seq === null ? null : i.attempt))).toEqual([1, 2]);
    expect(dropped).toEqual(['Abandoned draft']);
    expect(reply.text).toBe('Kept answer');
    expect(replyText(items)).toBe('Kept answer');
    const messages = await unwrap(client.GET('/v1/chats/{id}/messages', { params: { path: { id: chatId }, query: { limit: 200 } } }));
    expect(messages.data.at(-1)).toMatchObject({ role: 'assistant', content: reply.text, stop: null });
  });

  it('a declared error surfaces as OpenbotApiError with its type and message (and issues for InvalidInput)', async () => {
    const missing = await unwrap(client.GET('/v1/bots/{id}', { params: { path: { id: '0190a0b0-0000-7000-8000-000000000000' } } })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenbotApiError);
    expect(missing).toMatchObject({ status: 404, type: 'BotNotFound', message: expect.any(String) });
    expect((missing as OpenbotApiError).errorId).toBeUndefined();

    const invalid = await unwrap(client.POST('/v1/bots', { body: { name: '', model: 'fake/gpt-test' } })).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, type: 'InvalidInput' });
    const issues = (invalid as OpenbotApiError).issues ?? [];
    expect(issues.length).toBeGreaterThan(0);
    expect(new Set(issues.map((issue) => issue.path))).toEqual(new Set(['name']));
    expect(issues.every((issue) => typeof issue.message === 'string')).toBe(true);

    const unauthenticated = createOpenbotClient({ baseUrl, apiKey: 'obk_not-a-key' });
    await expect(unwrap(unauthenticated.GET('/v1/bots'))).rejects.toMatchObject({ status: 401, type: 'Unauthenticated' });

    // Streaming an unknown execution is refused before the first byte: thrown at once, never retried.
    const reconnects: ReconnectInfo[] = [];
    await expect(collect('0190a0b0-0000-7000-8000-000000000000', { onReconnect: (r) => reconnects.push(r) })).rejects.toMatchObject({ status: 404, type: 'ExecutionNotFound' });
    expect(reconnects).toEqual([]);
  });

  it('a server fault surfaces as RequestFailed with the errorId of the openbot-error-id header', async () => {
    await t.database.query('ALTER TABLE model_providers RENAME TO model_providers_hidden');
    try {
      const { error, response } = await client.GET('/v1/model-providers');
      expect(response.status).toBe(500);
      const fault = await unwrap(client.GET('/v1/model-providers')).catch((e: unknown) => e);
      expect(fault).toBeInstanceOf(OpenbotApiError);
      expect(fault).toMatchObject({ status: 500, type: 'RequestFailed', category: 'internal', errorId: expect.stringMatching(UUID) });
      expect((fault as OpenbotApiError).isServerFault).toBe(true);
      expect(error).toEqual({ type: 'RequestFailed', category: 'internal', errorId: response.headers.get('openbot-error-id') });
    } finally {
      await t.database.query('ALTER TABLE model_providers_hidden RENAME TO model_providers');
    }
  });

  it('an unreachable server is an OpenbotConnectionError', async () => {
    const nowhere = createOpenbotClient({ baseUrl: 'http://127.0.0.1:9', apiKey: secret });
    await expect(unwrap(nowhere.GET('/v1/bots'))).rejects.toBeInstanceOf(OpenbotConnectionError);
  });

  describe('streamEvents resumes a dropped connection', () => {
    /** A reply that streams role + 3 text chunks, then waits for `release` before the rest. */
    function heldReply(parts: readonly string[]): { reply: ReturnType<typeof heldStreamReply>; release: () => void } {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const items = [chunks.role(), ...parts.map(chunks.text), chunks.finish('stop'), chunks.usage(8, parts.length)];
      return { reply: heldStreamReply(items, { holdAfter: 4, release: released }), release };
    }
    const PARTS = ['One ', 'two ', 'three ', 'four ', 'five ', 'six'];

    it('cut by the network mid-stream (a fetch whose first event stream breaks after 2 events)', async () => {
      const held = heldReply(PARTS);
      fake.enqueue(held.reply);
      let sseRequests = 0;
      const lastEventIds: Array<string | null> = [];
      const cuttingFetch = async (request: Request): Promise<Response> => {
        const response = await fetch(request);
        if (!(request.headers.get('accept') ?? '').includes('text/event-stream')) return response;
        sseRequests += 1;
        lastEventIds.push(request.headers.get('last-event-id'));
        if (sseRequests > 1 || response.body === null) return response;
        return new Response(cutAfterFrames(response.body, 2), { status: response.status, headers: response.headers });
      };
      const cutting = createOpenbotClient({ baseUrl, apiKey: secret, fetch: cuttingFetch });
      const admission = await sendMessage(cutting, chatId, 'Count to six', { idempotencyKey: 'client-e2e-cut' });

      const reconnects: ReconnectInfo[] = [];
      const items: StreamItem[] = [];
      for await (const item of streamEvents(cutting, admission.executionId, { minDelayMs: 10, onReconnect: (r) => reconnects.push(r) })) {
        items.push(item);
        if (item.seq === 2) held.release();
      }
      expectContiguous(items);
      expect(reconnects).toEqual([expect.objectContaining({ attempt: 1, after: 2 })]);
      expect(lastEventIds).toEqual([null, '2']);
      expect(replyText(items)).toBe(PARTS.join(''));
    });

    it('closed by the server mid-stream (every socket closed after event 2)', async () => {
      const held = heldReply(PARTS);
      fake.enqueue(held.reply);
      const admission = await sendMessage(client, chatId, 'Count again', { idempotencyKey: 'client-e2e-close' });

      const reconnects: ReconnectInfo[] = [];
      const items = await collect(admission.executionId, { minDelayMs: 10, onReconnect: (r) => reconnects.push(r) }, (item) => {
        if (item.seq !== 2) return;
        t.app.getHttpServer().closeAllConnections();
        held.release();
      });
      expectContiguous(items);
      expect(reconnects.length).toBeGreaterThanOrEqual(1);
      // It resumes after the last event it read: event 2, or 3 when that one was in the same read as 2 when the server closed.
      expect(reconnects[0]).toMatchObject({ attempt: 1 });
      expect(reconnects[0]!.after).toBeGreaterThanOrEqual(2);
      expect(replyText(items)).toBe(PARTS.join(''));
      const messages = await unwrap(client.GET('/v1/chats/{id}/messages', { params: { path: { id: chatId }, query: { limit: 200 } } }));
      expect(messages.data.at(-1)).toMatchObject({ role: 'assistant', content: PARTS.join(''), turnId: admission.turnId });
    });
  });
});

/** Passes the body through until `frames` SSE messages went by, then fails it like a reset connection. */
function cutAfterFrames(body: ReadableStream<Uint8Array>, frames: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = 0;
  let text = '';
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Loop until something can be handed over: a pull that enqueues nothing is not called again.
      for (;;) {
        if (seen >= frames) {
          await reader.cancel();
          return controller.error(new TypeError('terminated'));
        }
        const { done, value } = await reader.read();
        if (done) return controller.close();
        text += decoder.decode(value, { stream: true });
        // Forward whole messages only, up to the cut.
        const out: string[] = [];
        for (let end = text.indexOf('\n\n'); seen < frames && end !== -1; end = text.indexOf('\n\n')) {
          const message = text.slice(0, end + 2);
          text = text.slice(end + 2);
          if (/^id: /m.test(message)) seen += 1;
          out.push(message);
        }
        if (out.length > 0) return controller.enqueue(new TextEncoder().encode(out.join('')));
      }
    },
    cancel: () => reader.cancel(),
  });
}
