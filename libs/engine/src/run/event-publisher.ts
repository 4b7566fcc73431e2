import { encodeEvent, toExecutionEvent, type ExecutionEvent } from '../logs/event-log';
import { tickLaneOf, type EventWriteBatcher } from '../logs/event-write-batcher';
import type { Json } from '../base/json';
import { announceEvents, announceStored, type NodeListener, type Notifier } from '../logs/node-listener';
import type { PhaseEvents } from '../authoring/phase-services';
import type { Queryable } from '../base/ports';
import type { RunScope } from '../base/run-scope';
import type { PendingEvent } from '../base/store';
import { publishEvents } from '../sql/events';
import type { SealedJson } from '../base/sealed-json';
import { retryStorage } from '../base/storage-retry';

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

/** One event waiting for its write; a joinable text event may still take more text. */
interface Buffered {
  readonly type: string;
  payload: Json;
  readonly position: { readonly step?: number; readonly attempt?: number } | undefined;
  /** Encoded at publish, or (joinable text) when its write starts. */
  stored: PendingEvent | null;
}

/**
 * Publishes a phase's events while it runs (EVT-01): each event is stored before anyone can read
 * it, in small batches. The first event of a phase run, and the first text of each attempt, are
 * written at once (the first token waits for one commit); later events wait for the node's next publish tick (every EVENT_WINDOW_MS), so
 * every running phase on the node writes at the same moment and the event write batcher stores
 * them all in one statement. A reader sees an event EVENT_WINDOW_MS after it was published at
 * most. Text published with `publishText` while it waits joins the text event before it (same
 * type and position): the reply is the same concatenation, in a few events instead of one per
 * token. `flush` (the phase's end) and a closing gate write what is left at once. A write fenced
 * off by a newer generation closes the phase gate: this owner has lost the execution and
 * publishes nothing more (CALL-05).
 */
export class EventPublisher implements PhaseEvents {
  private buffer: Buffered[] = [];
  private writing: Promise<void> | null = null;
  private failure: unknown = null;
  /** When the last write started (performance.now()); -Infinity before the first. */
  private lastWriteAt = Number.NEGATIVE_INFINITY;
  /** Ends the current window early (flush, a closing gate). */
  private hurry: (() => void) | null = null;
  private hurried = false;
  /** The text events (type and position) this run has published: the first of each goes at once. */
  private readonly texts = new Set<string>();
  /** A first text event waits in the buffer: the next write does not wait for a tick. */
  private urgent = false;
  /** Events `publishIn` appended in a transaction not yet announced (committed). */
  private committing: { readonly tx: Queryable; readonly events: ExecutionEvent[] } | null = null;

  constructor(
    private readonly ctx: PublisherServices,
    private readonly run: { readonly id: string; readonly generation: number },
    private readonly scope: RunScope,
  ) {}

  publish(type: string, payload?: Json, position?: { step?: number; attempt?: number }): void {
    if (this.scope.gateClosed) return;
    this.buffer.push({ type, payload: payload ?? null, position, stored: encodeEvent(this.ctx.sealed, this.run.id, type, payload ?? null, position) });
    this.writing ??= this.drain();
  }

  publishText(type: string, text: string, position?: { step?: number; attempt?: number }): void {
    if (this.scope.gateClosed) return;
    const last = this.buffer.at(-1);
    if (last !== undefined && last.stored === null && last.type === type && last.position?.step === position?.step && last.position?.attempt === position?.attempt) {
      last.payload = { text: (last.payload as { text: string }).text + text };
      return;
    }
    this.buffer.push({ type, payload: { text }, position, stored: null });
    const key = `${type}:${position?.step}:${position?.attempt}`;
    if (!this.texts.has(key)) {
      // The first text of an attempt (its first token) is stored and read at once.
      this.texts.add(key);
      this.urgent = true;
      this.hurry?.();
    }
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

  /**
   * Appends events inside the caller's transaction (they commit with its rows), fenced the same
   * way. They are kept for `announce`, which hands them to this node's readers once the
   * transaction committed; events of a transaction that never reached `announce` (rolled back)
   * are dropped by the next transaction's `publishIn`.
   */
  async publishIn(tx: Queryable, events: ReadonlyArray<{ type: string; payload?: Json; step?: number; attempt?: number }>): Promise<boolean> {
    const encoded = events.map((e) => encodeEvent(this.ctx.sealed, this.run.id, e.type, e.payload ?? null, e));
    const stored = await publishEvents(tx, this.run.id, this.run.generation, encoded);
    if (stored === null) return false;
    const first = stored.lastSeq - encoded.length + 1;
    if (this.committing?.tx !== tx) this.committing = { tx, events: [] };
    this.committing.events.push(...events.map((e, i) => toExecutionEvent(first + i, e.type, stored.at, encoded[i]!.step, encoded[i]!.attempt, e.payload ?? null)));
    return true;
  }

  /** Call after the transaction of `publishIn` committed: its events reach this node's readers from memory, other nodes by NOTIFY. */
  announce(): void {
    const committed = this.committing;
    this.committing = null;
    if (committed === null) {
      announceEvents(this.ctx, this.run.id);
      return;
    }
    announceStored(this.ctx, this.run.id, committed.events);
  }

  /**
   * Whether the next write waits for the node's next publish tick: not the first write of the run,
   * nor when a first text waits, the last write is a window or more ago, the window is 0, or the
   * write is hurried. Decided synchronously, so a write that does not wait takes the buffer in
   * the same turn of the event loop as the publish that started it.
   */
  private waitsForWindow(windowMs: number): boolean {
    return !(windowMs <= 0 || this.hurried || this.urgent || this.scope.gateClosed || performance.now() - this.lastWriteAt >= windowMs);
  }

  /** Waits for the node's next publish tick (a tick's writes are gathered into one statement). */
  private async window(windowMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.scope.signal.removeEventListener('abort', done);
        this.hurry = null;
        resolve();
      };
      void this.ctx.eventWrites.tick(windowMs, tickLaneOf(this.run.id)).then(done);
      this.scope.signal.addEventListener('abort', done, { once: true });
      this.hurry = done;
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.buffer.length > 0 && this.failure === null) {
        const windowMs = this.ctx.eventWindowMs ?? EVENT_WINDOW_MS;
        // A first token is taken alone: text published right after it joins the next event.
        const gathered = this.waitsForWindow(windowMs);
        if (gathered) await this.window(windowMs);
        this.urgent = false;
        this.lastWriteAt = performance.now();
        const batch = this.buffer;
        this.buffer = [];
        const events = batch.map((e) => (e.stored ??= encodeEvent(this.ctx.sealed, this.run.id, e.type, e.payload, e.position)));
        const stored = await retryStorage(() => this.ctx.eventWrites.write(this.run.id, this.run.generation, events, gathered), this.scope.signal);
        if (stored === null) {
          this.scope.closeGate('lease-lost');
          return;
        }
        // Stored: this node's own readers get them without reading them back; other nodes hear by the write's own NOTIFY.
        const first = stored.lastSeq - batch.length + 1;
        announceStored(
          this.ctx,
          this.run.id,
          batch.map((e, i) => toExecutionEvent(first + i, e.type, stored.at, events[i]!.step, events[i]!.attempt, e.payload)),
          stored.announced === true,
        );
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.writing = null;
    }
  }
}
