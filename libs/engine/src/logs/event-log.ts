import type { EventWait, NodeListener } from './node-listener';
import type { Queryable } from '../base/ports';
import { aad, type SealedJson } from '../base/sealed-json';
import type { PendingEvent } from '../base/store';
import { readEvents } from '../sql/events';
import type { Json } from '../base/json';

/** An event as observers see it (docs/http-api.md "Executions and events"). */
export interface ExecutionEvent {
  readonly seq: number;
  readonly type: string;
  readonly at: string;
  readonly step?: number;
  readonly attempt?: number;
  readonly [field: string]: Json | undefined;
}

export const ENDED_EVENT = 'execution.ended';

/** Page size of one read: an observer never holds more than this many events in memory. */
const PAGE = 100;
/** A lost notification costs at most this much latency (EVT-02). */
const FALLBACK_POLL_MS = 5_000;

export function encodeEvent(
  sealed: SealedJson,
  executionId: string,
  type: string,
  payload: Json | undefined,
  position: { step?: number; attempt?: number } = {},
): PendingEvent {
  const hasPayload = payload !== undefined && payload !== null;
  const envelope = hasPayload ? sealed.seal(payload, aad.event(executionId, type)) : null;
  return {
    type,
    step: position.step ?? null,
    attempt: position.attempt ?? null,
    keyId: envelope?.keyId ?? null,
    data: envelope?.data ?? null,
  };
}

/** The event a reader sees, built the same way from a stored row or from what this node just wrote. */
export function toExecutionEvent(seq: number, type: string, at: Date, step: number | null, attempt: number | null, payload: Json): ExecutionEvent {
  return Object.freeze({
    ...(payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload : {}),
    seq,
    type,
    at: at.toISOString(),
    ...(step !== null ? { step } : {}),
    ...(attempt !== null ? { attempt } : {}),
  });
}

/**
 * `observe(executionId, afterSequence)` (EVT-01..03): reads the ordered log from the cursor in
 * pages, waits for a wake-up (or the fallback poll) when it has caught up, and ends after the
 * final event. Pull-based: a reader that stops reading stops the reads; memory stays bounded.
 * With `follow` false it returns once it has caught up (a long poll's second half).
 */
export async function* observeEvents(
  deps: { db: Queryable; sealed: SealedJson; listener: NodeListener },
  executionId: string,
  after: number,
  signal?: AbortSignal,
  follow = true,
): AsyncGenerator<ExecutionEvent, void, undefined> {
  let cursor = after;
  let endSeen = false;
  /** The listener's sync point taken before the last table read that reached the end of the log (-1: read next time). */
  let syncedAt = -1;
  /** The fallback poll came due: the next check reads the table, whatever a whole buffer says. */
  let polled = false;
  /** The wait in progress: one abort listener for the whole reader stops it, not one per wait. */
  const waiting: { current: EventWait | null } = { current: null };
  const aborted = (): void => waiting.current?.stop();
  signal?.addEventListener('abort', aborted, { once: true });
  const waitForEvents = (): EventWait => (waiting.current = deps.listener.waitForEvents(executionId, FALLBACK_POLL_MS));
  try {
    while (!signal?.aborted) {
      // Events this node just committed are handed over in memory: no read when they follow the cursor.
      // `recent` and the wait below run in one synchronous step, so nothing is handed over between them.
      // A whole buffer (decision 061) can be behind another node's commit whose NOTIFY is still on its
      // way: only a follower, whom that NOTIFY will wake, may take it for the table.
      const buffered = deps.listener.recent(executionId, cursor, syncedAt, follow && !polled) as ExecutionEvent[] | null;
      if (buffered !== null && buffered.length > 0) {
        for (const event of buffered) {
          cursor = event.seq;
          yield event;
          if (event.type === ENDED_EVENT) return;
        }
        continue;
      }
      if (buffered !== null) {
        // Caught up with what this node handed over, and nothing else was announced since the last read.
        if (!follow) return;
        // The fallback poll always reads the table: a wake-up lost on any path costs latency, never an event.
        if ((await waitForEvents().woken) === 'timeout') {
          syncedAt = -1;
          polled = true;
        }
        continue;
      }
      // Listen before reading, so an event committed between the read and the wait still wakes us.
      const wait = waitForEvents();
      const sync = deps.listener.syncPoint();
      const { ended, rows } = await readEvents(deps.db, executionId, cursor, PAGE);
      polled = false;
      // Only a read that reached the end of the log is a sync point (a full page has more behind it).
      syncedAt = rows.length < PAGE ? sync : -1;
      for (const row of rows) {
        cursor = row.seq;
        const payload = row.key_id !== null && row.data !== null ? deps.sealed.open(row.key_id, row.data, aad.event(executionId, row.type)) : null;
        const event = toExecutionEvent(row.seq, row.type, row.at, row.step, row.attempt, payload);
        if (row.type === ENDED_EVENT) wait.stop();
        yield event;
        if (row.type === ENDED_EVENT) return;
      }
      if (rows.length === PAGE) {
        wait.stop();
        continue;
      }
      if (!follow) {
        wait.stop();
        return;
      }
      if (rows.length === 0) {
        // A reader past the final event ends: nothing more will come (the end can be read again from an
        // earlier cursor). The end may have committed after this read, so read once more after seeing it.
        if (endSeen) {
          wait.stop();
          return;
        }
        if (ended) {
          endSeen = true;
          syncedAt = -1;
          wait.stop();
          continue;
        }
      }
      if ((await wait.woken) === 'timeout') {
        syncedAt = -1;
        polled = true;
      }
    }
  } finally {
    signal?.removeEventListener('abort', aborted);
    waiting.current?.stop();
  }
}

