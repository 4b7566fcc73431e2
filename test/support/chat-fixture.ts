import { CommandBus } from '@nestjs/cqrs';
import { effectivePermissions, newId, type MemberCaller } from '@openbot/domain';
import { CreateApiKey } from '../../libs/platform/src/api-keys/commands/create-api-key.command';
import type { TestApp } from './test-app';

/** A Chat ready for Turns: an organization, a provider pointing at a fake model server, a Bot. */
export interface ChatFixture {
  readonly secret: string;
  readonly organizationId: string;
  readonly memberId: string;
  readonly botId: string;
  readonly chatId: string;
}

export interface Admission {
  messageId: string;
  turnId: string;
  executionId: string;
  admission: 'started' | 'queued' | 'steered';
}

export interface EventBody {
  seq: number;
  type: string;
  step?: number;
  attempt?: number;
  [field: string]: unknown;
}

export const bearer = (secret: string): string => `Bearer ${secret}`;

export async function createChatFixture(
  t: TestApp,
  options: { baseUrl: string; kind?: 'openai-compatible' | 'anthropic'; tools?: unknown[]; limits?: Record<string, number>; instructions?: string },
): Promise<ChatFixture> {
  const org = await t.createOrganization(`Org ${newId().slice(-6)}`);
  const auth = bearer(org.secret);
  await t.http().post('/v1/model-providers').set('authorization', auth).send({ name: 'fake', kind: options.kind ?? 'openai-compatible', baseUrl: options.baseUrl }).expect(201);
  const bot = await t
    .http()
    .post('/v1/bots')
    .set('authorization', auth)
    .send({ name: 'Bot', model: 'fake/gpt-test', instructions: options.instructions ?? 'Be brief.', tools: options.tools ?? [], ...(options.limits ? { limits: options.limits } : {}) })
    .expect(201);
  const chat = await t.http().post('/v1/chats').set('authorization', auth).send({ botId: (bot.body as { id: string }).id }).expect(201);
  return { secret: org.secret, organizationId: org.organizationId, memberId: org.memberId, botId: (bot.body as { id: string }).id, chatId: (chat.body as { id: string }).id };
}

/** A second member of the same organization with an API key of its own (another identity). */
export async function addMember(t: TestApp, organizationId: string, role: 'member' | 'viewer' | 'admin' = 'member'): Promise<{ memberId: string; secret: string }> {
  const memberId = newId();
  await t.database.query(`INSERT INTO members (id, organization_id, role) VALUES ($1, $2, $3)`, [memberId, organizationId, role]);
  const caller = { kind: 'member', organizationId, memberId, role, apiKeyId: null, permissions: effectivePermissions(role, null) } as unknown as MemberCaller;
  const key = await t.app.get(CommandBus).execute(new CreateApiKey(caller, 'second', null));
  return { memberId, secret: key.secret };
}

export async function sendMessage(t: TestApp, secret: string, chatId: string, content: string, key?: string): Promise<Admission> {
  const req = t.http().post(`/v1/chats/${chatId}/messages`).set('authorization', bearer(secret));
  if (key !== undefined) req.set('idempotency-key', key);
  const res = await req.send({ content });
  expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 202, body: expect.objectContaining({ admission: expect.any(String) }) });
  return res.body as Admission;
}

/** Every event of an execution up to its end, through the JSON long poll of the public API. */
export async function eventsUntilEnd(t: TestApp, secret: string, executionId: string, timeoutMs = 20_000): Promise<EventBody[]> {
  const events: EventBody[] = [];
  const deadline = Date.now() + timeoutMs;
  let after = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`execution ${executionId} did not end; events: ${events.map((e) => e.type).join(', ')}`);
    const res = await t.http().get(`/v1/executions/${executionId}/events?after=${after}&wait=5`).set('authorization', bearer(secret)).expect(200);
    const body = res.body as { events: EventBody[]; next: number; ended: boolean };
    events.push(...body.events);
    after = body.next;
    if (body.ended) return events;
  }
}

/** Waits until the execution has an event of `type` (and answers the events so far). */
export async function waitForEvent(t: TestApp, secret: string, executionId: string, type: string, timeoutMs = 20_000): Promise<EventBody[]> {
  const events: EventBody[] = [];
  const deadline = Date.now() + timeoutMs;
  let after = 0;
  while (!events.some((e) => e.type === type)) {
    if (Date.now() > deadline) throw new Error(`no ${type} event on ${executionId}; events: ${events.map((e) => e.type).join(', ')}`);
    const res = await t.http().get(`/v1/executions/${executionId}/events?after=${after}&wait=2`).set('authorization', bearer(secret)).expect(200);
    const body = res.body as { events: EventBody[]; next: number; ended: boolean };
    events.push(...body.events);
    after = body.next;
    if (body.ended && !events.some((e) => e.type === type)) throw new Error(`execution ended without ${type}: ${events.map((e) => e.type).join(', ')}`);
  }
  return events;
}

export async function listMessages(t: TestApp, secret: string, chatId: string): Promise<Array<{ id: string; role: string; content: string; turnId: string; stop: string | null }>> {
  const res = await t.http().get(`/v1/chats/${chatId}/messages?limit=200`).set('authorization', bearer(secret)).expect(200);
  return (res.body as { data: Array<{ id: string; role: string; content: string; turnId: string; stop: string | null }> }).data;
}

/** The reply as docs/http-api.md defines it: the `text.delta` texts of the last attempt of each step. */
export function replyText(events: readonly EventBody[]): string {
  const lastAttempt = new Map<number, number>();
  for (const e of events) if (e.type === 'model.started') lastAttempt.set(e.step!, e.attempt!);
  return events
    .filter((e) => e.type === 'text.delta' && lastAttempt.get(e.step!) === e.attempt)
    .map((e) => e.text as string)
    .join('');
}

/**
 * The event types, each run of `text.delta` shown once: how many text events a reply takes
 * depends on the publish windows (tokens that arrive together join one event).
 */
export function eventTypes(events: ReadonlyArray<{ readonly type: string }>): string[] {
  return events.map((e) => e.type).filter((type, i, all) => type !== 'text.delta' || all[i - 1] !== 'text.delta');
}
