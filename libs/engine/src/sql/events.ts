import type { Queryable } from '../base/ports';
import type { EventRow, PendingEvent } from '../base/store';
import { FINAL_STATES, type Statement } from './statement';

/**
 * The SQL of the event log: append under a held row lock, publish while a generation owns the
 * execution (one by one or batched), read after a cursor, and the NOTIFY that announces them.
 */

/** Pending events as the five parallel arrays the `unnest(…)` of an event insert takes. */
export function eventColumns(events: readonly PendingEvent[]): [string[], Array<number | null>, Array<number | null>, Array<string | null>, Array<Buffer | null>] {
  return [events.map((e) => e.type), events.map((e) => e.step), events.map((e) => e.attempt), events.map((e) => e.keyId), events.map((e) => e.data)];
}

/** The final-state test of the event statements: an ended execution takes no more phase events. */
const NOT_ENDED = `state NOT IN ${FINAL_STATES}`;

/**
 * The CTE that hands out sequence numbers: `seq` adds `n` to the execution's counter (its row
 * created by the first event) and answers the new last number. Every writer runs it after its
 * lock on the execution row, so numbers have no gaps and no repeats (EVT-01). `source` names
 * the rows (`id`, `n`) to count for; one row per execution.
 */
export function bumpSeqs(source: string): string {
  return `seq AS (
             INSERT INTO execution_event_seqs AS s (execution_id, last_seq) SELECT id, n FROM ${source} ORDER BY id
             ON CONFLICT (execution_id) DO UPDATE SET last_seq = s.last_seq + EXCLUDED.last_seq
             RETURNING s.execution_id AS id, s.last_seq
           )`;
}

/** Appends events under the row lock the caller's transaction holds; answers the last sequence number. */
export async function appendEvents(db: Queryable, id: string, events: readonly PendingEvent[]): Promise<number> {
  return (await appendStoredEvents(db, id, events))?.lastSeq ?? 0;
}

/** `appendEvents`, answering also the time the rows store (null: nothing to append), for handing them to this node's readers after commit. */
export async function appendStoredEvents(db: Queryable, id: string, events: readonly PendingEvent[]): Promise<{ lastSeq: number; at: Date } | null> {
  if (events.length === 0) return null;
  const { rows } = await db.query<{ last_seq: number; at: Date }>({
    name: 'engine.append_events',
    text: `WITH src AS (SELECT $1::uuid AS id, $2::int AS n), ${bumpSeqs('src')}, ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, seq.last_seq - $2 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM seq, unnest($3::text[], $4::int[], $5::int[], $6::text[], $7::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           ) SELECT last_seq, now() AS at FROM seq`,
    values: [
      id,
      events.length,
      ...eventColumns(events),
    ],
  });
  const row = rows[0];
  return row === undefined ? null : { lastSeq: row.last_seq, at: row.at };
}

/**
 * Events after a cursor, and in the same read whether the execution has ended (so a reader
 * that has caught up knows whether more can come without a second query).
 */
export async function readEvents(db: Queryable, id: string, after: number, limit: number): Promise<{ ended: boolean; rows: EventRow[] }> {
  const { rows } = await db.query<EventRow & { ended: boolean }>({
    name: 'engine.read_events',
    text: `SELECT x.state IN ${FINAL_STATES} AS ended,
                  e.seq, e.type, e.step, e.attempt, e.at, e.key_id, e.data
             FROM executions x
             LEFT JOIN LATERAL (
               SELECT seq, type, step, attempt, at, key_id, data FROM execution_events
                WHERE execution_id = x.id AND seq > $2 ORDER BY seq LIMIT $3
             ) e ON true
            WHERE x.id = $1`,
    values: [id, after, limit],
  });
  if (rows.length === 0) return { ended: true, rows: [] };
  return { ended: rows[0]!.ended, rows: rows[0]!.seq === null ? [] : rows };
}

/**
 * The NOTIFY a write outside a transaction sends itself (`announced`): one notification naming
 * the executions it stored, `$channel` and `$origin|` as the Notifier's payloads are. `rows` is the
 * CTE of stored executions (`id`); the main query must read `note` for it to run.
 */
function noteCte(rows: string, channel: string, origin: string): string {
  return `note AS (
             SELECT pg_notify(${channel}, p) FROM (SELECT ${origin} || '|' || string_agg(id::text, ',') AS p FROM ${rows}) x WHERE p IS NOT NULL
           )`;
}

function publishText(announced: boolean): string {
  return `WITH src AS (
             SELECT id, $3::int AS n FROM executions WHERE id = $1 AND generation = $2 AND ${NOT_ENDED} FOR SHARE
           ), ${bumpSeqs('src')}, ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, seq.last_seq - $3 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM seq, unnest($4::text[], $5::int[], $6::int[], $7::text[], $8::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           )${announced ? `, ${noteCte('seq', '$9::text', '$10::text')}` : ''}
           SELECT last_seq, now() AS at FROM seq${announced ? ' WHERE (SELECT count(*) FROM note) >= 0' : ''}`;
}

const publishStatement: Statement = { name: 'engine.publish_events', text: publishText(false) };
const publishAnnouncedStatement: Statement = { name: 'engine.publish_events_announced', text: publishText(true) };

/** Who hears of events a write outside a transaction stored: the channel, and the sending node's origin tag. */
export interface EventNote {
  readonly channel: string;
  readonly origin: string;
}

/**
 * Publishes events of a running phase at once (text deltas, tool progress): appended only while
 * `generation` still owns the execution and it has not ended (CALL-05: an old owner publishes
 * nothing). The fence is a shared lock on the execution row, not an update of it: a take-over
 * or an end waits for the publish to commit and then outranks it. Answers the last sequence
 * number and the commit time, or null when fenced off. With `note` (a write outside a
 * transaction) the statement also sends the other nodes' notification.
 */
export async function publishEvents(
  db: Queryable,
  id: string,
  generation: number,
  events: readonly PendingEvent[],
  note?: EventNote,
): Promise<{ lastSeq: number; at: Date } | null> {
  if (events.length === 0) return null;
  const { rows } = await db.query<{ last_seq: number; at: Date }>({
    ...(note ? publishAnnouncedStatement : publishStatement),
    values: [id, generation, events.length, ...eventColumns(events), ...(note ? [note.channel, note.origin] : [])],
  });
  const row = rows[0];
  return row ? { lastSeq: row.last_seq, at: row.at } : null;
}

/**
 * The events of many running phases at once (event-write-batcher.ts), each fenced like
 * `publishEvents`, with the notification of every execution stored ($9 channel, $10 origin).
 * Rows are locked in ID order, so two statements touching the same rows cannot deadlock.
 * `id = ANY($1)` lets the planner use the primary key on a table without statistics (decision 065).
 */
export const publishEventsBatch: Statement = {
  name: 'engine.publish_events_batch',
  text: `WITH i AS (
               SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[], $7::bytea[], $8::int[])
                        AS i(id, generation, type, step, attempt, key_id, data, ord)
             ), n AS (
               SELECT id, generation, count(*)::int AS n FROM i GROUP BY id, generation
             ), src AS (
               SELECT x.id, x.generation, n.n FROM executions x JOIN n ON n.id = x.id AND n.generation = x.generation
                WHERE x.id = ANY($1::uuid[]) AND x.${NOT_ENDED}
                ORDER BY x.id FOR SHARE OF x
             ), ${bumpSeqs('src')}, upd AS (
               SELECT seq.id, src.generation, seq.last_seq, src.n FROM seq JOIN src ON src.id = seq.id
             ), ev AS (
               INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
               SELECT i.id, upd.last_seq - upd.n + i.ord, i.type, i.step, i.attempt, i.key_id, i.data FROM i JOIN upd ON upd.id = i.id AND upd.generation = i.generation
             ), ${noteCte('upd', '$9::text', '$10::text')}
             SELECT id, last_seq, now() AS at FROM upd WHERE (SELECT count(*) FROM note) >= 0`,
};

/** Many notifications in one round trip (node-listener.ts). */
export const notify: Statement = {
  name: 'engine.notify',
  text: 'SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)',
};
