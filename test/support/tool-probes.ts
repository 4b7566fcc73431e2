import type { ServerResponse } from 'node:http';
import type { Reply } from '../fakes/fake-tool-server';
import { bearer } from './chat-fixture';
import type { TestApp } from './test-app';
import type { TestDatabase } from './test-database';

/**
 * Probes for tool tests: what the database held at the moment an event was stored, a hanging
 * tool reply that reports when the caller gave up, and a poll of an execution's state.
 */

/** What the call log of an execution held when one of its events was inserted. */
export interface EventWitness {
  readonly seq: number;
  readonly type: string;
  /** `call_key` → `status` of every call row visible to the event's insert. */
  readonly calls: Record<string, string>;
}

const WITNESS_TYPES = ['model.completed', 'tool.called', 'tool.result', 'model.started'];

/**
 * Records, inside the transaction that inserts each `model.*` / `tool.*` event, the call log rows
 * that transaction can see: a result row seen there was committed (or commits together with the
 * event) before the event became readable. Returns a reader and a remover.
 */
export async function installEventWitness(database: TestDatabase): Promise<{ read(executionId: string): Promise<EventWitness[]>; remove(): Promise<void> }> {
  await database.query(`CREATE TABLE IF NOT EXISTS tool_probe_witness (execution_id uuid NOT NULL, seq integer NOT NULL, type text NOT NULL, calls jsonb NOT NULL)`);
  await database.query(`CREATE OR REPLACE FUNCTION tool_probe_witness() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO tool_probe_witness (execution_id, seq, type, calls)
      SELECT NEW.execution_id, NEW.seq, NEW.type, COALESCE(jsonb_object_agg(c.call_key || '#' || c.attempt, c.status), '{}'::jsonb)
        FROM execution_calls c WHERE c.execution_id = NEW.execution_id;
      RETURN NEW;
    END $$`);
  await database.query(
    `CREATE TRIGGER tool_probe_witness AFTER INSERT ON execution_events FOR EACH ROW
       WHEN (NEW.type IN (${WITNESS_TYPES.map((type) => `'${type}'`).join(', ')})) EXECUTE FUNCTION tool_probe_witness()`,
  );
  return {
    async read(executionId) {
      return database.query<EventWitness>('SELECT seq, type, calls FROM tool_probe_witness WHERE execution_id = $1 ORDER BY seq', [executionId]);
    },
    async remove() {
      await database.query('DROP TRIGGER IF EXISTS tool_probe_witness ON execution_events');
      await database.query('DROP FUNCTION IF EXISTS tool_probe_witness()');
      await database.query('DROP TABLE IF EXISTS tool_probe_witness');
    },
  };
}

/** The status of the call log rows whose key ends with `suffix` (e.g. `:model`, `:tool:<callId>`), per attempt. */
export function callStatuses(witness: EventWitness, suffix: string): string[] {
  return Object.entries(witness.calls)
    .filter(([key]) => key.split('#')[0]!.endsWith(suffix))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, status]) => status);
}

/** A reply that never answers; `closed` resolves when the caller drops the request (abort, timeout). */
export function watchedHangReply(): { reply: Reply; received: Promise<void>; closed: Promise<void> } {
  let onReceived!: () => void;
  let onClosed!: () => void;
  const received = new Promise<void>((resolve) => (onReceived = resolve));
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  const reply: Reply = (res: ServerResponse) => {
    onReceived();
    if (res.destroyed || res.socket?.destroyed) onClosed();
    else res.once('close', onClosed);
  };
  return { reply, received, closed };
}

/** Resolves with `promise`'s value, or rejects with `message` after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `GET /v1/executions/{id}` until its state is `state`; answers the last body. */
export async function waitForExecutionState(
  t: TestApp,
  secret: string,
  executionId: string,
  state: string,
  timeoutMs = 10_000,
): Promise<{ id: string; state: string; kind: string; resource: { type: string; id: string } | null }> {
  const deadline = Date.now() + timeoutMs;
  let last: { id: string; state: string; kind: string; resource: { type: string; id: string } | null } | undefined;
  for (;;) {
    const res = await t.http().get(`/v1/executions/${executionId}`).set('authorization', bearer(secret)).expect(200);
    last = res.body as typeof last & object;
    if (last.state === state) return last;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} is ${last.state}, not ${state}, after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
