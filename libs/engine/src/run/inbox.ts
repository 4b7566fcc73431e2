import type { Pool } from 'pg';
import type { Queryable } from '../base/ports';
import { GateClosed, type GateReason } from '../base/run-scope';
import { aad, type SealedJson } from '../base/sealed-json';
import type { InboxSignal, PhaseInbox } from '../authoring/workflow';
import * as signalSql from '../sql/signals';

/**
 * The inbox of one phase run: signals reach the phase that is running (steering input, approval
 * decisions) without waiting for its end. Reading never consumes: the IDs read are consumed in
 * the phase's checkpoint transaction (`consumeRead`), so
 * - a signal read by a phase whose owner dies before its checkpoint is read again by the next run;
 * - a signal stored after the phase's last read stays unconsumed: the next wait that names it
 *   wakes at once (its check runs under the row lock every signal insert takes), or the next
 *   phase reads it. It is never dropped.
 * A stored signal's notification (SIGNALS_CHANNEL) rings the bell of `next`; a lost notification
 * is made up for by a re-read after `recheckMs` (notifications only cost latency, EVT-02).
 */
export class RunInbox implements PhaseInbox {
  private readonly read: string[] = [];
  private bell = ringable();

  constructor(
    private readonly db: Pool,
    private readonly sealed: SealedJson,
    private readonly executionId: string,
    private readonly gate: AbortSignal,
    private readonly recheckMs: number,
  ) {}

  /** The signal IDs this phase run has read: consumed with its checkpoint. */
  get consumed(): readonly string[] {
    return this.read;
  }

  async receive(names: readonly string[]): Promise<InboxSignal[]> {
    if (names.length === 0) return [];
    const { rows } = await this.db.query<{ id: string; name: string; key_id: string | null; data: Buffer | null }>({
      ...signalSql.inboxRead,
      values: [this.executionId, [...names], this.read],
    });
    return rows.map((row) => {
      this.read.push(row.id);
      return { name: row.name, payload: row.key_id !== null && row.data !== null ? this.sealed.open(row.key_id, row.data, aad.signal(row.id)) : null };
    });
  }

  async next(names: readonly string[], until?: AbortSignal): Promise<InboxSignal[]> {
    if (names.length === 0) throw new Error('inbox.next needs at least one signal name');
    for (;;) {
      if (this.gate.aborted) throw new GateClosed(this.gate.reason as GateReason);
      if (until?.aborted === true) return [];
      // Armed before the read: a signal stored during the read rings this bell, not a later one.
      const rang = this.bell.promise;
      const arrived = await this.receive(names);
      if (arrived.length > 0) return arrived;
      const gate = this.gate;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.recheckMs);
        function done(): void {
          clearTimeout(timer);
          gate.removeEventListener('abort', done);
          until?.removeEventListener('abort', done);
          resolve();
        }
        gate.addEventListener('abort', done, { once: true });
        until?.addEventListener('abort', done, { once: true });
        void rang.then(done);
      });
    }
  }

  /** A signal for this execution was stored: wakes a `next` in progress. */
  ring(): void {
    const bell = this.bell;
    this.bell = ringable();
    bell.ring();
  }
}

function ringable(): { promise: Promise<void>; ring: () => void } {
  let ring!: () => void;
  const promise = new Promise<void>((resolve) => (ring = resolve));
  return { promise, ring };
}

/** In the checkpoint's transaction: the signals the phase read are consumed with its result. */
export async function consumeRead(tx: Queryable, executionId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query({
    ...signalSql.inboxConsume,
    values: [executionId, [...ids]],
  });
}
