import { SealedRecords } from '../../libs/platform/src/sealing/sealed-records';
import { FakeOpenAiServer, statusReply, textReply } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture, type EventBody } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * What a user sees when a model provider refuses a Turn's call (decision 082): `model.failed`,
 * the Turn's `execution.ended` and `GET /v1/executions/{id}` carry the real category after the
 * retries and the provider's answer (status, code, first line) scrubbed of keys, tokens and URLs;
 * a call that waits for a rate limit says so with `model.waiting`. The full answer stays sealed.
 */

/** What the fake provider's 500 says: a key, a bearer token and a URL with a token in its query. */
const LEAKY_500 = {
  error: {
    message:
      'The server had an error while processing your request. Key sk-live-4f9c2a7b1e8d3c6a5b0f9e8d was used with Authorization: Bearer tok_9a8b7c6d5e4f3a2b1c0d; ' +
      'status at https://status.llm.test/incidents/42?token=abc123\nTraceback (most recent call last): internal frame',
    type: 'server_error',
    code: 'server_error',
  },
};
const SECRETS = ['sk-live', '4f9c2a7b1e8d3c6a5b0f9e8d', 'tok_9a8b7c6d5e4f3a2b1c0d', 'status.llm.test', 'abc123', 'Traceback'];
const SCRUBBED_500 = 'The server had an error while processing your request. Key [redacted] was used with Authorization: [redacted] [redacted]; status at [url]';

interface ExecutionView {
  state: string;
  category?: string;
  errorId?: string;
  detail?: { status: number | null; code: string | null; message: string | null };
  stop: string | null;
}

describe('model provider failures a user can read', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });
  beforeEach(async () => {
    fake = await FakeOpenAiServer.start();
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterEach(async () => {
    await fake.close();
  });

  const view = async (executionId: string): Promise<ExecutionView> =>
    (await t.http().get(`/v1/executions/${executionId}`).set('authorization', bearer(chat.secret)).expect(200)).body as ExecutionView;
  const modelEvents = (events: EventBody[]) =>
    events.filter((e) => e.type.startsWith('model.')).map(({ type, step, attempt, category, retrying, detail, reason }) => ({ type, step, attempt, category, retrying, detail, reason }));

  it('[ERR-01] a provider that answers 500 three times fails the Turn `unavailable`, not `internal`: every model.failed, the end event and the execution show its status, code and first line with the key, token and URL scrubbed; the whole answer stays sealed', async () => {
    fake.enqueue(statusReply(500, LEAKY_500), statusReply(500, LEAKY_500), statusReply(500, LEAKY_500));
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hello?');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    const detail = { status: 500, code: 'server_error', message: SCRUBBED_500 };
    expect(fake.requests).toHaveLength(3);
    expect(modelEvents(events)).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.failed', step: 1, attempt: 1, category: 'unavailable', retrying: true, detail },
      { type: 'model.started', step: 1, attempt: 2 },
      { type: 'model.failed', step: 1, attempt: 2, category: 'unavailable', retrying: true, detail },
      { type: 'model.started', step: 1, attempt: 3 },
      { type: 'model.failed', step: 1, attempt: 3, category: 'unavailable', retrying: false, detail },
    ]);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'unavailable', errorId: expect.any(String), detail });
    const execution = await view(turn.executionId);
    expect(execution).toMatchObject({ state: 'failed', category: 'unavailable', errorId: end.errorId, detail, stop: null });
    const shown = JSON.stringify(events) + JSON.stringify(execution);
    for (const secret of SECRETS) expect(shown).not.toContain(secret);

    // The error record names the same category and detail in clear; the provider's whole answer is only in its sealed cause (ERR-01).
    const [record] = await t.database.query<{ category: string; detail: unknown; cause_id: string }>('SELECT category, detail, cause_id FROM error_records WHERE id = $1', [end.errorId]);
    expect(record).toMatchObject({ category: 'unavailable', detail });
    const sealed = JSON.stringify((await t.app.get(SealedRecords).get(record!.cause_id as never))?.value);
    expect(sealed).toContain('sk-live-4f9c2a7b1e8d3c6a5b0f9e8d');
    const [clear] = await t.database.query<{ row: string }>('SELECT row_to_json(r)::text AS row FROM error_records r WHERE id = $1', [end.errorId]);
    for (const secret of SECRETS) expect(clear!.row).not.toContain(secret);
  });

  it('[ERR-01] a typo in the model ID fails the Turn `invalid-request` at once: the provider’s 404 `model_not_found` and its message reach model.failed, the end event and the execution', async () => {
    const auth = bearer(chat.secret);
    await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', auth).send({ model: 'fake/gpt-tset' }).expect(200);
    fake.enqueue(
      statusReply(404, { error: { message: 'The model `gpt-tset` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' } }),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hello?');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(fake.requests).toHaveLength(1);
    expect((fake.requests[0]!.body as { model: string }).model).toBe('gpt-tset');
    const detail = { status: 404, code: 'model_not_found', message: 'The model `gpt-tset` does not exist or you do not have access to it.' };
    expect(modelEvents(events)).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.failed', step: 1, attempt: 1, category: 'invalid-request', retrying: false, detail },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'failed', category: 'invalid-request', errorId: expect.any(String), detail });
    expect(await view(turn.executionId)).toMatchObject({ state: 'failed', category: 'invalid-request', errorId: events.at(-1)!.errorId, detail, stop: null });
  });

  it('[CALL-04] a provider’s 429 with Retry-After is a failed attempt followed by model.waiting with the wait it asked for; the Turn goes on and completes, and nothing secret is shown', async () => {
    fake.enqueue(
      statusReply(
        429,
        { error: { message: 'Rate limit reached for gpt-test in organization org-7f3a9c2e1b5d8f4a6c0e on requests per min. Visit https://platform.llm.test/account/rate-limits to learn more.', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '1' },
      ),
      textReply(['after the wait'], [4, 3]),
    );
    const turn = await sendMessage(t, chat.secret, chat.chatId, 'Hello?');
    const events = await eventsUntilEnd(t, chat.secret, turn.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    expect(fake.requests).toHaveLength(2);
    const detail = { status: 429, code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-test in organization [redacted] on requests per min. Visit [url] to learn more.' };
    expect(modelEvents(events)).toEqual([
      { type: 'model.started', step: 1, attempt: 1 },
      { type: 'model.failed', step: 1, attempt: 1, category: 'rate-limited', retrying: true, detail },
      { type: 'model.waiting', step: 1, attempt: 1, reason: 'provider-rate-limit' },
      { type: 'model.started', step: 1, attempt: 2 },
      { type: 'model.completed', step: 1, attempt: 2 },
    ]);
    const waiting = events.find((e) => e.type === 'model.waiting')!;
    const started = events.find((e) => e.type === 'model.started')!;
    expect(waiting.retryAfter).toBe(1);
    expect(typeof waiting.until).toBe('string');
    expect(new Date(waiting.until as string).toISOString()).toBe(waiting.until);
    // It waits from the failure on: `until` is after the attempt that was refused started.
    expect(Date.parse(waiting.until as string)).toBeGreaterThan(Date.parse(started.at as string));
    expect(JSON.stringify(events)).not.toContain('org-7f3a9c2e1b5d8f4a6c0e');
    expect(JSON.stringify(events)).not.toContain('platform.llm.test');
  });
});
