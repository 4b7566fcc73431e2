import { encodeEvent, toExecutionEvent } from './event-log';
import type { EventWriteBatcher } from './event-write-batcher';
import type { Json } from './json';
import { announceEvents, EVENTS_CHANNEL, type NodeListener, type Notifier } from './node-listener';
import type { PhaseEvents } from './phase-services';
import type { Queryable } from './ports';
import type { RunScope } from './run-scope';
import type { PendingEvent } from './store';
import { publishEvents } from './sql/events';
import type { SealedJson } from './sealed-json';
import { retryStorage } from './storage-retry';

/** The part of the node's EngineContext a publisher uses (the whole context is one of these). */
export interface PublisherServices {
  readonly sealed: SealedJson;
  readonly eventWrites: EventWriteBatcher;
  readonly listener: NodeListener;
  readonly notifier: Notifier;
  /** The publish window (default EVENT_WINDOW_MS; 0 writes as soon as the previous write ended). */
  readonly eventWindowMs?: number;
}

/** Events published after the first write of a phase run go out together, at most this often. */
export const EVENT_WINDOW_MS = 50;

/**
 * Publishes a phase's events while it runs (EVT-01): each event is stored before anyone can read
 * it, in small batches. The first event of a phase run is written at once (the first token waits
 * for one commit); later events are written together at most every EVENT_WINDOW_MS, so a stream
 * of 200 tokens costs about twenty commits instead of two hundred, and a reader sees them a few
 * tens of milliseconds later at most. `flush` (the phase's end) and a closing gate write what is
 * left at once. A write fenced off by a newer generation closes the phase gate: this owner has
 * lost the execution and publishes nothing more (CALL-05).
 */
export class EventPublisher implements PhaseEvents {
  private buffer: Array<{ readonly stored: PendingEvent; readonly payload: Json }> = [];
  private writing: Promise<void> | null = null;
  private failure: unknown = null;
  /** When the last write started (performance.now()); -Infinity before the first. */
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  /** Ends the current window early (flush, a closing gate). */
  private hurry: (() => void) | null = null;
  private hurried = false;

  constructor(
    private readonly ctx: PublisherServices,
    private readonly run: { readonly id: string; readonly generation: number },
    private readonly scope: RunScope,
  ) {}

  publish(type: string, payload?: Json, position?: { step?: number; attempt?: number }): void {
    if (this.scope.gateClosed) return;
    this.buffer.push({ stored: encodeEvent(this.ctx.sealed, this.run.id, type, payload ?? null, position), payload: payload ?? null });
    this.writing ??= this.drain();
  }

  /** Resolves once every event published so far is stored; throws the write failure, if any. */
  async flush(): Promise<void> {
    this.hurried = true;
    this.hurry?.();
    try {
      while (this.writing !== null) await this.writing;
    } finally {
      this.hurried = false;
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the storage write threw
    if (this.failure !== null) throw this.failure;
  }

  /** Appends events inside the caller's transaction (they commit with its rows), fenced the same way. */
  async publishIn(tx: Queryable, events: ReadonlyArray<{ type: string; payload?: Json; step?: number; attempt?: number }>): Promise<boolean> {
    const encoded = events.map((e) => encodeEvent(this.ctx.sealed, this.run.id, e.type, e.payload ?? null, e));
    return (await publishEvents(tx, this.run.id, this.run.generation, encoded)) !== null;
  }

  /** Call after the transaction of `publishIn` committed: wakes the readers. */
  announce(): void {
    announceEvents(this.ctx, this.run.id);
  }

  /** Waits out the rest of the current window, unless hurried or the gate closed. */
  private async window(): Promise<void> {
    const wait = this.lastWriteAt + (this.ctx.eventWindowMs ?? EVENT_WINDOW_MS) - performance.now();
    if (wait <= 0 || this.hurried || this.scope.gateClosed) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.scope.signal.removeEventListener('abort', done);
        this.hurry = null;
        resolve();
      };
      const timer = setTimeout(done, wait);
      this.scope.signal.addEventListener('abort', done, { once: true });
      this.hurry = done;
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.buffer.length > 0 && this.failure === null) {
        await this.window();
        this.lastWriteAt = performance.now();
        const batch = this.buffer;
        this.buffer = [];
        const stored = await retryStorage(
          () => this.ctx.eventWrites.write(this.run.id, this.run.generation, batch.map((e) => e.stored)),
          this.scope.signal,
        );
        if (stored === null) {
          this.scope.closeGate('lease-lost');
          return;
        }
        // Stored: this node's own readers get them without reading them back.
        const first = stored.lastSeq - batch.length + 1;
        this.ctx.listener.deliver(
          this.run.id,
          batch.map((e, i) => toExecutionEvent(first + i, e.stored.type, stored.at, e.stored.step, e.stored.attempt, e.payload)),
        );
        // Other nodes hear by NOTIFY; readers here find the batch in memory.
        this.ctx.notifier.notify(EVENTS_CHANNEL, this.run.id);
        this.ctx.listener.wakeDelivered(this.run.id);
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.writing = null;
    }
  }
}
