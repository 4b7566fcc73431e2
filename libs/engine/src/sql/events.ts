import type { Queryable } from '../ports';
import type { EventRow, PendingEvent } from '../store';
import type { Statement } from './statement';

/**
 * The SQL of the event log: append under a held row lock, publish while a generation owns the
 * execution (one by one or batched), read after a cursor, and the NOTIFY that announces them.
 */

/** Pending events as the five parallel arrays the `unnest(…)` of an event insert takes. */
export function eventColumns(events: readonly PendingEvent[]): [string[], Array<number | null>, Array<number | null>, Array<string | null>, Array<Buffer | null>] {
  return [events.map((e) => e.type), events.map((e) => e.step), events.map((e) => e.attempt), events.map((e) => e.keyId), events.map((e) => e.data)];
}

/** Appends events under the row lock the caller's transaction holds. */
export async function appendEvents(db: Queryable, id: string, events: readonly PendingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rows } = await db.query<{ last_seq: number }>({
    name: 'engine.append_events',
    text: `WITH upd AS (UPDATE executions SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq), ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, upd.last_seq - $2 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM upd, unnest($3::text[], $4::int[], $5::int[], $6::text[], $7::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           ) SELECT last_seq FROM upd`,
    values: [
      id,
      events.length,
      ...eventColumns(events),
    ],
  });
  return rows[0]?.last_seq ?? 0;
}

/**
 * Events after a cursor, and in the same read whether the execution has ended (so a reader
 * that has caught up knows whether more can come without a second query).
 */
export async function readEvents(db: Queryable, id: string, after: number, limit: number): Promise<{ ended: boolean; rows: EventRow[] }> {
  const { rows } = await db.query<EventRow & { ended: boolean }>({
    name: 'engine.read_events',
    text: `SELECT x.state IN ('completed', 'failed', 'cancelled', 'interrupted') AS ended,
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
 * Publishes events of a running phase at once (text deltas, tool progress): appended only while
 * `generation` still owns the execution and it has not ended (CALL-05: an old owner publishes
 * nothing). Answers the last sequence number and the commit time, or null when fenced off.
 */
export async function publishEvents(
  db: Queryable,
  id: string,
  generation: number,
  events: readonly PendingEvent[],
): Promise<{ lastSeq: number; at: Date } | null> {
  if (events.length === 0) return null;
  const { rows } = await db.query<{ last_seq: number; at: Date }>({
    name: 'engine.publish_events',
    text: `WITH upd AS (
             UPDATE executions SET last_seq = last_seq + $3
              WHERE id = $1 AND generation = $2 AND state NOT IN ('completed', 'failed', 'cancelled', 'interrupted')
             RETURNING last_seq
           ), ev AS (
             INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
             SELECT $1, upd.last_seq - $3 + e.ord, e.type, e.step, e.attempt, e.key_id, e.data
               FROM upd, unnest($4::text[], $5::int[], $6::int[], $7::text[], $8::bytea[])
                    WITH ORDINALITY AS e(type, step, attempt, key_id, data, ord)
           ) SELECT last_seq, now() AS at FROM upd`,
    values: [
      id,
      generation,
      events.length,
      ...eventColumns(events),
    ],
  });
  const row = rows[0];
  return row ? { lastSeq: row.last_seq, at: row.at } : null;
}

/** The events of many running phases at once (event-write-batcher.ts). Rows are locked in ID order first, so two statements touching the same rows cannot deadlock. */
export const publishEventsBatch: Statement = {
  name: 'engine.publish_events_batch',
  text: `WITH i AS (
               SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[], $7::bytea[], $8::int[])
                        AS i(id, generation, type, step, attempt, key_id, data, ord)
             ), n AS (
               SELECT id, generation, count(*)::int AS n FROM i GROUP BY id, generation
             ), locked AS (
               SELECT x.id FROM executions x WHERE x.id IN (SELECT id FROM n) ORDER BY x.id FOR UPDATE
             ), upd AS (
               UPDATE executions e SET last_seq = e.last_seq + n.n
                 FROM n JOIN locked l ON l.id = n.id
                WHERE e.id = n.id AND e.generation = n.generation
                  AND e.state NOT IN ('completed', 'failed', 'cancelled', 'interrupted')
                RETURNING e.id, e.last_seq, n.n
             ), ev AS (
               INSERT INTO execution_events (execution_id, seq, type, step, attempt, key_id, data)
               SELECT i.id, upd.last_seq - upd.n + i.ord, i.type, i.step, i.attempt, i.key_id, i.data FROM i JOIN upd ON upd.id = i.id
             )
             SELECT id, last_seq, now() AS at FROM upd`,
};

/** Many notifications in one round trip (node-listener.ts). */
export const notify: Statement = {
  name: 'engine.notify',
  text: 'SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)',
};
