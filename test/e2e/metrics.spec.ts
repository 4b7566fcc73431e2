import { MetricsServer, OpenbotMetrics } from '@openbot/platform';
import type { AddressInfo } from 'node:net';
import { chunks, heldStreamReply, textReply, FakeOpenAiServer } from '../fakes/fake-openai-server';
import { bearer, createChatFixture, eventsUntilEnd, sendMessage, type ChatFixture } from '../support/chat-fixture';
import { openSse } from '../support/sse-client';
import { startTestApp, type TestApp } from '../support/test-app';

/** One sample line of the Prometheus text format. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

interface Scrape {
  readonly types: Map<string, string>;
  readonly samples: Sample[];
}

function parse(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { types, samples };
}

/** The family a sample belongs to (a histogram's `_bucket`, `_sum` and `_count` belong to it). */
function familyOf(name: string, types: Map<string, string>): string {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return types.has(base) ? base : name;
}

function value(scrape: Scrape, name: string, labels: Record<string, string>): number {
  const found = scrape.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((sum, s) => sum + s.value, 0);
}

describe('metrics (docs/decisions/034-metrics.md)', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;
  let chat: ChatFixture;
  let metricsPort: number;

  const scrape = async (): Promise<Scrape> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return parse(await res.text());
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { OPENBOT_METRICS_PORT: '0' } });
    fake = await FakeOpenAiServer.start();
    metricsPort = t.app.get(MetricsServer).port!;
    chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('the public API port never answers /metrics: 404, while the metrics port serves it', async () => {
    await t.http().get('/metrics').expect(404);
    expect(metricsPort).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/other`);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });

  it('a Turn shows up in the counters: HTTP requests, one model call, tokens, phase durations, an ended execution', async () => {
    const before = await scrape();
    fake.enqueue(textReply(['Hel', 'lo'], [12, 3]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Hi');
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);

    // The route pattern, never the raw path with the chat's ID.
    expect(delta('openbot_http_request_duration_seconds_count', { method: 'POST', route: '/v1/chats/:id/messages', status_class: '2xx' })).toBe(1);
    expect(after.samples.some((s) => s.labels.route?.includes(chat.chatId))).toBe(false);
    const model = { provider_kind: 'openai-compatible', model: 'gpt-test' };
    expect(delta('openbot_model_call_duration_seconds_count', model)).toBe(1);
    expect(delta('openbot_model_call_first_token_seconds_count', model)).toBe(1);
    expect(delta('openbot_model_tokens_total', { ...model, direction: 'input' })).toBe(12);
    expect(delta('openbot_model_tokens_total', { ...model, direction: 'output' })).toBe(3);
    expect(after.samples.some((s) => s.name === 'openbot_model_cost_micros_total' && s.labels.model === 'gpt-test')).toBe(true);
    expect(delta('openbot_phase_duration_seconds_count', { workflow: 'chat.turn', outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(delta('openbot_executions_ended_total', { workflow: 'chat.turn', state: 'completed' })).toBe(1);
    expect(delta('openbot_event_write_batch_executions_count')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'openbot_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    // No label value anywhere is an ID of this Turn's records.
    const ids = [chat.chatId, chat.botId, chat.organizationId, admitted.executionId];
    expect(after.samples.flatMap((s) => Object.values(s.labels)).filter((v) => ids.some((id) => v.includes(id)))).toEqual([]);
  });

  it('an open SSE observer counts in the gauge until it closes', async () => {
    let release!: () => void;
    // The reply is held after its first text: the Turn stays running while the stream is open.
    const held = new Promise<void>((r) => (release = r));
    fake.enqueue(heldStreamReply([chunks.role(), chunks.text('Hi'), chunks.finish('stop'), chunks.usage(1, 1)], { holdAfter: 2, release: held }));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, 'Hello');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const apiPort = (t.app.getHttpServer().address() as AddressInfo).port;
    const stream = await openSse(apiPort, `/v1/executions/${admitted.executionId}/events`, { authorization: bearer(chat.secret) });
    await stream.waitFor(': connected');
    expect(value(await scrape(), 'openbot_sse_observers_open', {})).toBe(1);
    release();
    await stream.waitFor('execution.ended');
    await stream.ended;
    expect(value(await scrape(), 'openbot_sse_observers_open', {})).toBe(0);
  });

  it('the metric families, their types and label names are stable (values are not)', async () => {
    const { types, samples } = await scrape();
    const labels = new Map<string, Set<string>>();
    for (const s of samples) {
      const family = familyOf(s.name, types);
      const set = labels.get(family) ?? new Set<string>();
      for (const k of Object.keys(s.labels)) if (k !== 'le') set.add(k);
      labels.set(family, set);
    }
    // A family with no sample yet shows no labels in the text: its declared label names come from
    // the registry, and every label a sample carries must be one of them.
    const registry = t.app.get(OpenbotMetrics).registry;
    const declared = (name: string): string[] => [...((registry.getSingleMetric(name) as unknown as { labelNames?: string[] }).labelNames ?? [])].sort();
    for (const [family, seen] of labels) expect({ family, extra: [...seen].filter((l) => !declared(family).includes(l)) }).toEqual({ family, extra: [] });
    const families = [...types.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, type]) => `${name} ${type} [${declared(name).join(',')}]`);
    expect(families).toEqual([
      'openbot_db_pool_connections gauge [state]',
      'openbot_event_write_batch_executions histogram []',
      'openbot_executions gauge [state,workflow]',
      'openbot_executions_ended_total counter [state,workflow]',
      'openbot_executions_outcome_unknown gauge []',
      'openbot_http_request_duration_seconds histogram [method,route,status_class]',
      'openbot_model_call_duration_seconds histogram [model,provider_kind]',
      'openbot_model_call_first_token_seconds histogram [model,provider_kind]',
      'openbot_model_cost_micros_total counter [model,provider_kind]',
      'openbot_model_tokens_total counter [direction,model,provider_kind]',
      'openbot_phase_duration_seconds histogram [outcome,workflow]',
      'openbot_queue_jobs gauge [queue,when]',
      'openbot_sse_observers_open gauge []',
      'openbot_takeovers_total counter [cause]',
    ]);
  });
});

describe('metrics: the model label is bounded (decision 074)', () => {
  let t: TestApp;
  let fake: FakeOpenAiServer;

  beforeAll(async () => {
    // HOST as in the image: the metrics server still listens on loopback only, unless OPENBOT_METRICS_HOST says otherwise.
    t = await startTestApp({ env: { OPENBOT_METRICS_PORT: '0', OPENBOT_METRICS_MODEL_LABELS: '2', HOST: '0.0.0.0' } });
    fake = await FakeOpenAiServer.start();
  });

  it('security: with HOST=0.0.0.0 and no OPENBOT_METRICS_HOST, /metrics listens on 127.0.0.1 only', () => {
    expect(t.config.host).toBe('0.0.0.0');
    expect(t.app.get(MetricsServer).host).toBe('127.0.0.1');
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('security: an organization that runs Turns under ever new model names gets labels for the first few only, the rest count as "other"', async () => {
    const chat = await createChatFixture(t, { baseUrl: fake.baseUrl });
    const names = ['invented-1', 'invented-2', 'invented-3', 'invented-4', 'other'];
    for (const name of names) {
      await t.http().patch(`/v1/bots/${chat.botId}`).set('authorization', bearer(chat.secret)).send({ model: `fake/${name}` }).expect(200);
      fake.enqueue(textReply(['ok'], [1, 1]));
      const admitted = await sendMessage(t, chat.secret, chat.chatId, `as ${name}`);
      expect((await eventsUntilEnd(t, chat.secret, admitted.executionId)).at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    }
    const res = await fetch(`http://127.0.0.1:${t.app.get(MetricsServer).port!}/metrics`);
    const scrape = parse(await res.text());
    const models = new Set(scrape.samples.filter((s) => s.name === 'openbot_model_call_duration_seconds_count').map((s) => s.labels.model));
    expect([...models].sort()).toEqual(['invented-1', 'invented-2', 'other']);
    expect(value(scrape, 'openbot_model_call_duration_seconds_count', { model: 'other' })).toBe(3);
    expect(value(scrape, 'openbot_model_tokens_total', { model: 'other', direction: 'input' })).toBe(3);
  });
});

