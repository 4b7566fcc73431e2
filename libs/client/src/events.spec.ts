import { createOpenbotClient } from './client';
import { OpenbotApiError } from './errors';
import { streamEvents, type ReconnectInfo, type StreamEventsOptions, type StreamItem } from './events';
import { replyText } from './reply-text';
import { SseParser } from './sse';

/** One scripted answer of the fake server: SSE text pieces (then the body ends or breaks), or an error answer. */
type Script =
  | { readonly sse: readonly string[]; readonly end: 'close' | 'break' | 'hang' }
  | { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> };

const frame = (seq: number, type: string, fields: Record<string, unknown> = {}): string =>
  `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type, at: '2026-01-01T00:00:00.000Z', ...fields })}\n\n`;

/** A client whose fetch answers the scripts in order and records each request's Last-Event-ID. */
function scripted(...scripts: Script[]): { client: ReturnType<typeof createOpenbotClient>; requests: Array<{ url: string; lastEventId: string | null; authorization: string | null; accept: string | null }> } {
  const requests: Array<{ url: string; lastEventId: string | null; authorization: string | null; accept: string | null }> = [];
  const fetch = async (request: Request): Promise<Response> => {
    requests.push({ url: request.url, lastEventId: request.headers.get('last-event-id'), authorization: request.headers.get('authorization'), accept: request.headers.get('accept') });
    const script = scripts.shift();
    if (script === undefined) throw new Error('no scripted answer left');
    if ('status' in script) return new Response(JSON.stringify(script.body), { status: script.status, headers: { 'content-type': 'application/json', ...script.headers } });
    const pieces = [...script.sse];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const piece = pieces.shift();
        if (piece !== undefined) return controller.enqueue(new TextEncoder().encode(piece));
        if (script.end === 'close') return controller.close();
        if (script.end === 'break') return controller.error(new TypeError('terminated'));
        return new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(controller.error(request.signal.reason)), { once: true }));
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return { client: createOpenbotClient({ baseUrl: 'http://openbot.test/', apiKey: 'obk_test', fetch }), requests };
}

async function collect(client: ReturnType<typeof createOpenbotClient>, options: StreamEventsOptions = {}): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of streamEvents(client, 'exec-1', { minDelayMs: 1, maxDelayMs: 4, ...options })) items.push(item);
  return items;
}

describe('streamEvents', () => {
  it('reads SSE with the API key until execution.ended', async () => {
    const { client, requests } = scripted({ sse: [': connected\n\n', frame(1, 'model.started', { step: 1, attempt: 1 }), frame(2, 'execution.ended', { state: 'completed' })], end: 'hang' });
    const items = await collect(client);
    expect(items.map((i) => [i.seq, i.type])).toEqual([
      [1, 'model.started'],
      [2, 'execution.ended'],
    ]);
    expect(requests).toEqual([{ url: 'http://openbot.test/v1/executions/exec-1/events', lastEventId: null, authorization: 'Bearer obk_test', accept: 'text/event-stream' }]);
  });

  it('resumes a broken or closed stream with Last-Event-ID: no duplicate, no gap', async () => {
    const reconnects: ReconnectInfo[] = [];
    const { client, requests } = scripted(
      { sse: [frame(1, 'model.started'), frame(2, 'text.delta', { text: 'a' }).slice(0, 10)], end: 'break' },
      // The server repeats nothing after the cursor, but a repeat must not reach the caller anyway.
      { sse: [frame(1, 'model.started'), frame(2, 'text.delta', { text: 'a' })], end: 'close' },
      { sse: [frame(3, 'text.delta', { text: 'b' }), frame(4, 'execution.ended', { state: 'completed' })], end: 'hang' },
    );
    const items = await collect(client, { onReconnect: (r) => reconnects.push(r) });
    expect(items.map((i) => i.seq)).toEqual([1, 2, 3, 4]);
    expect(requests.map((r) => r.lastEventId)).toEqual([null, '1', '2']);
    expect(reconnects.map((r) => [r.attempt, r.after])).toEqual([
      [1, 1],
      [1, 2],
    ]);
  });

  it('starts after `after`', async () => {
    const { client, requests } = scripted({ sse: [frame(6, 'execution.ended', { state: 'failed' })], end: 'hang' });
    expect((await collect(client, { after: 5 })).map((i) => i.seq)).toEqual([6]);
    expect(requests[0]!.lastEventId).toBe('5');
  });

  it('yields an SSE error event as a fault carrying RequestFailed, then resumes', async () => {
    const fault = { type: 'RequestFailed', category: 'internal', errorId: '0190a0b0-0000-7000-8000-000000000001' };
    const { client, requests } = scripted(
      { sse: [frame(1, 'model.started'), `event: error\ndata: ${JSON.stringify(fault)}\n\n`], end: 'close' },
      { sse: [frame(2, 'execution.ended', { state: 'completed' })], end: 'hang' },
    );
    const items = await collect(client);
    expect(items).toEqual([expect.objectContaining({ seq: 1 }), { seq: null, type: 'error', error: fault }, expect.objectContaining({ seq: 2 })]);
    expect(requests.map((r) => r.lastEventId)).toEqual([null, '1']);
  });

  it('throws a 4xx at once, without retrying', async () => {
    const { client, requests } = scripted({ status: 404, body: { type: 'ExecutionNotFound', message: 'Execution not found.' } });
    const error = await collect(client).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenbotApiError);
    expect(error).toMatchObject({ status: 404, type: 'ExecutionNotFound', message: 'Execution not found.' });
    expect(requests).toHaveLength(1);
  });

  it('retries 5xx answers a bounded number of times, then throws the last one with its errorId', async () => {
    const unavailable = (): Script => ({ status: 503, body: { type: 'RequestFailed', category: 'unavailable', errorId: 'e-1' }, headers: { 'openbot-error-id': 'e-1' } });
    const { client, requests } = scripted(unavailable(), unavailable(), unavailable());
    const error = await collect(client, { maxRetries: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, type: 'RequestFailed', category: 'unavailable', errorId: 'e-1' });
    expect(requests).toHaveLength(3);
  });

  it('counts only consecutive failures: progress resets the budget', async () => {
    const { client } = scripted(
      { sse: [frame(1, 'a')], end: 'break' },
      { sse: [frame(2, 'b')], end: 'break' },
      { sse: [frame(3, 'c')], end: 'break' },
      { sse: [frame(4, 'execution.ended', { state: 'completed' })], end: 'hang' },
    );
    expect((await collect(client, { maxRetries: 1 })).map((i) => i.seq)).toEqual([1, 2, 3, 4]);
  });

  it('replaces a connection that stays silent longer than idleTimeoutMs', async () => {
    const { client, requests } = scripted({ sse: [frame(1, 'a')], end: 'hang' }, { sse: [frame(2, 'execution.ended', { state: 'completed' })], end: 'hang' });
    expect((await collect(client, { idleTimeoutMs: 50 })).map((i) => i.seq)).toEqual([1, 2]);
    expect(requests.map((r) => r.lastEventId)).toEqual([null, '1']);
  });

  it('stops with the caller signal, and breaking out of the loop closes the connection', async () => {
    const { client, requests } = scripted({ sse: [frame(1, 'a')], end: 'hang' });
    const controller = new AbortController();
    const seen: StreamItem[] = [];
    const reading = (async () => {
      for await (const item of streamEvents(client, 'exec-1', { signal: controller.signal })) {
        seen.push(item);
        controller.abort(new Error('enough'));
      }
    })();
    await expect(reading).rejects.toThrow('enough');
    expect(seen.map((i) => i.seq)).toEqual([1]);
    expect(requests).toHaveLength(1);

    const again = scripted({ sse: [frame(1, 'a'), frame(2, 'b')], end: 'hang' });
    for await (const item of streamEvents(again.client, 'exec-1')) if (item.seq === 1) break;
    expect(again.requests).toHaveLength(1);
  });
});

describe('replyText', () => {
  it('joins the text of the last attempt of each step', () => {
    const e = (seq: number, type: string, step: number, attempt: number, text?: string): StreamItem => ({ seq, type, at: '', step, attempt, ...(text !== undefined ? { text } : {}) });
    const events = [
      e(1, 'model.started', 1, 1),
      e(2, 'text.delta', 1, 1, 'lost '),
      e(3, 'model.started', 1, 2),
      e(4, 'text.delta', 1, 2, 'Hello'),
      e(5, 'model.completed', 1, 2),
      e(6, 'model.started', 2, 1),
      e(7, 'text.delta', 2, 1, ' world'),
    ];
    expect(replyText(events)).toBe('Hello world');
  });
});

describe('SseParser', () => {
  it('handles pieces split anywhere, CRLF and CR line ends, comments and multi-line data', () => {
    const wire = ': hello\r\nid: 1\r\nevent: a\r\ndata: {"x":\r\ndata: 1}\r\n\r\nid: 2\rdata: two\r\rdata:no-space\n\n';
    for (let size = 1; size <= wire.length; size++) {
      const parser = new SseParser();
      const messages = [];
      for (let i = 0; i < wire.length; i += size) messages.push(...parser.push(wire.slice(i, i + size)));
      expect(messages).toEqual([
        { id: '1', event: 'a', data: '{"x":\n1}' },
        { id: '2', event: 'message', data: 'two' },
        { event: 'message', data: 'no-space' },
      ]);
    }
  });

  it('does not dispatch a message without data', () => {
    expect(new SseParser().push('id: 3\nevent: x\n\n')).toEqual([]);
  });
});
