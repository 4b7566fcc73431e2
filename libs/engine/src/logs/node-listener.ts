import { Client } from 'pg';
import type { Queryable } from '../base/ports';
import * as eventSql from '../sql/events';

export const EVENTS_CHANNEL = 'openbot_events';
/** Most events kept per execution for local readers; older ones are read from the table. */
const RECENT_LIMIT = 512;
/** How long events stay buffered after the last local reader stopped waiting. */
const RECENT_LINGER_MS = 10_000;

/** A registered wait for an execution's events (`NodeListener.waitForEvents`). */
export interface EventWait {
  readonly woken: Promise<'woken' | 'timeout'>;
  stop(): void;
}

/** An event as readers see it; only its sequence number matters here. */
export interface BufferedEvent {
  readonly seq: number;
  readonly type: string;
}
/** One local wait: settled by a wake-up, by its reader, or by the sweep once `until` passed. */
interface EventWaiter {
  readonly executionId: string;
  readonly until: number;
  readonly settle: (why: 'woken' | 'timeout') => void;
}

/** The events this node handed over for one execution, kept while its local readers wait. */
interface RecentEvents {
  readonly events: BufferedEvent[];
  linger: NodeJS.Timeout | null;
  lastWaitEndedAt: number;
  unbufferedAt: number;
  /**
   * The buffer holds every event this execution has: this node created it and buffered from its
   * first event (`track`), nothing was dropped off the front, and no event came by another path
   * since. A reader caught up with it needs no read to know it is caught up (decision 061).
   */
  whole: boolean;
}

/** How often the open waits' fallback polls are checked: a poll is due at most this much late. */
const SWEEP_MS = 250;
export const SIGNALS_CHANNEL = 'openbot_signals';
const MAX_PAYLOAD = 7_000;

/**
 * One shared LISTEN connection per node (EVT-02). Notifications only wake: readers always read
 * the tables from their cursor, so a lost notification costs latency, never an event.
 * After a reconnect every waiter is woken, since notifications may have been missed meanwhile.
 */
export class NodeListener {
  private client: Client | null = null;
  private stopped = false;
  private readonly eventWaiters = new Map<string, Set<EventWaiter>>();
  /** Checks the waits' fallback polls while any wait is open. */
  private sweep: NodeJS.Timeout | null = null;
  /** Events this node committed, for its own readers of the same execution: they skip a read. */
  private readonly recentEvents = new Map<string, RecentEvents>();
  /** Counts wake-ups the buffer does not account for: events committed by another path or node. */
  private tick = 0;
  private signalHandler: (executionId: string) => void = () => undefined;

  /** `node`: this engine's origin tag; event notifications it sent itself are skipped (it woke its readers directly). */
  constructor(
    private readonly connectionString: string,
    private readonly node = '',
  ) {}

  onSignal(handler: (executionId: string) => void): void {
    this.signalHandler = handler;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
    this.wakeAll();
  }

  /**
   * A wait whose `woken` resolves when a notification for `executionId` arrives (`woken`), after
   * `timeoutMs` (`timeout`: the fallback poll, which must read the table; the node's sweep finds
   * it due at most SWEEP_MS late), or at `stop()` (the reader found something to do, or was
   * closed; cheaper than an AbortController per wait).
   */
  waitForEvents(executionId: string, timeoutMs: number): EventWait {
    let settle!: (why: 'woken' | 'timeout') => void;
    const woken = new Promise<'woken' | 'timeout'>((resolve) => (settle = resolve));
    const waiter: EventWaiter = { executionId, until: performance.now() + timeoutMs, settle };
    let waiters = this.eventWaiters.get(executionId);
    if (!waiters) this.eventWaiters.set(executionId, (waiters = new Set()));
    waiters.add(waiter);
    this.sweep ??= setInterval(() => this.timeOut(), SWEEP_MS);
    return { woken, stop: () => this.release(waiter, 'woken') };
  }

  /** Ends one wait: the reader stopped waiting, or its fallback poll is due. */
  private release(waiter: EventWaiter, why: 'woken' | 'timeout'): void {
    const waiters = this.eventWaiters.get(waiter.executionId);
    if (waiters?.delete(waiter) === true && waiters.size === 0) this.noWaiters(waiter.executionId);
    waiter.settle(why);
  }

  /** The last local wait for `executionId` ended: its buffered events linger a while, then go. */
  private noWaiters(executionId: string): void {
    this.eventWaiters.delete(executionId);
    this.scheduleForget(executionId);
    if (this.eventWaiters.size === 0 && this.sweep !== null) {
      clearInterval(this.sweep);
      this.sweep = null;
    }
  }

  /**
   * The fallback polls due: one node-wide timer checks every wait a few times a second, instead of
   * a timer per wait (a thousand readers of streaming Turns start and end a wait at every publish tick).
   */
  private timeOut(): void {
    const now = performance.now();
    // Deleting the entry being visited is safe while iterating a Map or a Set: no copies needed.
    for (const waiters of this.eventWaiters.values()) for (const waiter of waiters) if (now >= waiter.until) this.release(waiter, 'timeout');
  }

  /**
   * Hands events this node just committed (stored, in sequence order) to its local readers, so
   * they need not read them back. Kept only while someone here observes the execution.
   */
  deliver(executionId: string, events: readonly BufferedEvent[]): void {
    let recent = this.recentEvents.get(executionId);
    if (recent === undefined) {
      if (!this.eventWaiters.has(executionId)) return;
      this.recentEvents.set(executionId, (recent = { events: [], linger: null, lastWaitEndedAt: 0, unbufferedAt: 0, whole: false }));
    }
    recent.events.push(...events);
    if (recent.events.length > RECENT_LIMIT) {
      recent.events.splice(0, recent.events.length - RECENT_LIMIT);
      recent.whole = false;
    }
  }

  /**
   * This node created `executionId` and runs it from here (call before it can store an event):
   * its log is empty, and what this node commits for it is buffered from the first event, for
   * readers that come within the linger time (decision 061). Such a reader needs no table read
   * to learn where the log stands.
   */
  track(executionId: string): void {
    if (this.recentEvents.has(executionId)) return;
    const recent: RecentEvents = { events: [], linger: null, lastWaitEndedAt: performance.now(), unbufferedAt: 0, whole: true };
    this.recentEvents.set(executionId, recent);
    recent.linger = this.lingerTimer(executionId, recent, RECENT_LINGER_MS);
  }

  /**
   * The buffered events right after `after`, without gaps; null when the next one is not here
   * (written by another node or another path): the reader then reads the table. An empty list:
   * the reader is caught up with this buffer, and no wake-up since its table read at `syncedAt`
   * (a `syncPoint()` taken before a read that reached the end of the log) came from elsewhere,
   * so the table holds nothing newer for it: it can wait without reading. A whole buffer (`track`)
   * stands in for that read when `trustWhole`: for a reader that follows (it will be woken by the
   * NOTIFY of another node's commit still on its way) and whose fallback poll is not due.
   */
  recent(executionId: string, after: number, syncedAt = -1, trustWhole = true): BufferedEvent[] | null {
    const recent = this.recentEvents.get(executionId);
    if (recent === undefined) return null;
    const events = recent.events;
    // Sequence numbers rise through the buffer. Usually it has no gaps and the next event sits
    // where its number says; a caught-up reader (the next one not here yet) costs no scan.
    const next = after + 1;
    const inRange = events.length > 0 && next >= events[0]!.seq && next <= events[events.length - 1]!.seq;
    const guess = inRange ? next - events[0]!.seq : -1;
    const start = !inRange ? -1 : events[guess]?.seq === next ? guess : events.findIndex((event) => event.seq === next);
    if (start < 0 && trustWhole && recent.whole && (events.length === 0 ? 0 : events[events.length - 1]!.seq) === after) return [];
    if (start < 0) return syncedAt >= 0 && events.length > 0 && events[events.length - 1]!.seq === after && recent.unbufferedAt <= syncedAt ? [] : null;
    const out: BufferedEvent[] = [];
    for (let i = start, expected = after + 1; i < events.length && events[i]!.seq === expected; i++, expected++) out.push(events[i]!);
    return out;
  }

  /** How many events this node holds in memory for `executionId`'s local readers (EVT-02: at most RECENT_LIMIT). */
  bufferedEvents(executionId: string): number {
    return this.recentEvents.get(executionId)?.events.length ?? 0;
  }

  private scheduleForget(executionId: string): void {
    const recent = this.recentEvents.get(executionId);
    if (recent === undefined) return;
    recent.lastWaitEndedAt = performance.now();
    // One linger timer per buffer, armed again at its end while waits keep ending (no timer churn per wait).
    recent.linger ??= this.lingerTimer(executionId, recent, RECENT_LINGER_MS);
  }

  private lingerTimer(executionId: string, recent: RecentEvents, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      recent.linger = null;
      if (this.eventWaiters.has(executionId)) return;
      const left = recent.lastWaitEndedAt + RECENT_LINGER_MS - performance.now();
      if (left > 0) recent.linger = this.lingerTimer(executionId, recent, left);
      else if (this.recentEvents.get(executionId) === recent) this.recentEvents.delete(executionId);
    }, ms);
    timer.unref();
    return timer;
  }

  /** Taken before a table read: a later wake-up from elsewhere makes the next check read again. */
  syncPoint(): number {
    return this.tick;
  }

  /** Wakes local waiters directly (events committed by this node need no round trip); they read the table. */
  wake(executionId: string): void {
    const recent = this.recentEvents.get(executionId);
    this.tick++;
    if (recent !== undefined) {
      recent.unbufferedAt = this.tick;
      recent.whole = false;
    }
    this.wakeWaiters(executionId);
  }

  /** Wakes local waiters for events just handed over by `deliver`: they find them in memory. */
  wakeDelivered(executionId: string): void {
    this.wakeWaiters(executionId);
  }

  private wakeWaiters(executionId: string): void {
    const waiters = this.eventWaiters.get(executionId);
    if (waiters === undefined) return;
    this.noWaiters(executionId);
    for (const waiter of waiters) waiter.settle('woken');
  }

  private wakeAll(): void {
    // Notifications may have been missed meanwhile: no buffer may count as whole any more.
    for (const recent of this.recentEvents.values()) recent.whole = false;
    for (const id of [...this.eventWaiters.keys()]) this.wake(id);
  }

  private async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      const client = new Client({ connectionString: this.connectionString, application_name: 'openbot listener' });
      try {
        client.on('error', () => undefined);
        await client.connect();
        client.on('notification', (message) => {
          const { origin, ids } = parsePayload(message.payload ?? '');
          if (message.channel === EVENTS_CHANNEL) {
            if (origin !== '' && origin === this.node) return;
            for (const id of ids) this.wake(id);
          }
          else if (message.channel === SIGNALS_CHANNEL) for (const id of ids) this.signalHandler(id);
        });
        client.once('end', () => {
          if (this.client === client) this.client = null;
          if (!this.stopped) void this.connect();
        });
        await client.query(`LISTEN ${EVENTS_CHANNEL}`);
        await client.query(`LISTEN ${SIGNALS_CHANNEL}`);
        this.client = client;
        this.wakeAll();
        return;
      } catch {
        await client.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** attempt)).unref());
      }
    }
  }
}

/** A payload is `<origin node>|<id>,<id>…`; one without `|` has no origin. */
function parsePayload(payload: string): { origin: string; ids: string[] } {
  const bar = payload.indexOf('|');
  const origin = bar < 0 ? '' : payload.slice(0, bar);
  return { origin, ids: payload.slice(bar + 1).split(',').filter((id) => id !== '') };
}

/** The least time between two NOTIFY statements of a node (see `Notifier`). */
const NOTIFY_INTERVAL_MS = 20;

/**
 * Sends notifications after commit, batched on one connection (docs/architecture.md: a NOTIFY inside
 * the checkpoint transaction would serialize every commit's WAL flush). Statements are at least
 * `intervalMs` apart, and each carries every execution that had news meanwhile: a node streaming
 * many Turns sends a few notifications a second instead of one (and one commit) per event window.
 * Only readers on other nodes wait for them, and at most that much longer; readers here are woken
 * directly.
 */
export class Notifier {
  private readonly pending = new Map<string, Set<string>>();
  private flushing: Promise<void> | null = null;
  private lastSentAt = Number.NEGATIVE_INFINITY;

  /** `node` tags every payload, so the sending node's own listener can skip what it already woke locally. */
  constructor(
    private readonly db: Queryable,
    private readonly node = '',
    private readonly intervalMs = NOTIFY_INTERVAL_MS,
  ) {}

  notify(channel: string, executionId: string): void {
    let ids = this.pending.get(channel);
    if (!ids) this.pending.set(channel, (ids = new Set()));
    ids.add(executionId);
    this.flushing ??= this.flush();
  }

  /** Waits until everything queued so far was sent. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    try {
      while (this.pending.size > 0) {
        const wait = this.lastSentAt + this.intervalMs - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        this.lastSentAt = performance.now();
        const batch = [...this.pending.entries()];
        this.pending.clear();
        const channels: string[] = [];
        const payloads: string[] = [];
        const prefix = `${this.node}|`;
        for (const [channel, ids] of batch) {
          let chunk = '';
          for (const id of ids) {
            if (prefix.length + chunk.length + id.length + 1 > MAX_PAYLOAD) {
              channels.push(channel);
              payloads.push(prefix + chunk);
              chunk = '';
            }
            chunk = chunk === '' ? id : `${chunk},${id}`;
          }
          if (chunk !== '') {
            channels.push(channel);
            payloads.push(prefix + chunk);
          }
        }
        await this.db
          .query({
            ...eventSql.notify,
            values: [channels, payloads],
          })
          .catch(() => undefined); // a lost notification only costs latency (EVT-02)
      }
    } finally {
      this.flushing = null;
    }
  }
}

/**
 * After a commit that stored events of `executionId`: readers on other nodes hear of them by
 * NOTIFY, readers on this node at once (EVT-02). The log stays the truth if either is lost.
 */
/**
 * After events this node stored have committed: its readers get them from memory (`deliver`),
 * other nodes hear by NOTIFY. For events written with their payloads at hand (a publisher's
 * writes, `publishIn`, an end); `announceEvents` is for the others, whose readers read the table.
 */
export function announceStored(
  node: { readonly notifier: Notifier; readonly listener: NodeListener },
  executionId: string,
  events: readonly BufferedEvent[],
  /** The write's own statement sent the NOTIFY (event-write-batcher.ts): only this node's readers are left. */
  notified = false,
): void {
  node.listener.deliver(executionId, events);
  if (!notified) node.notifier.notify(EVENTS_CHANNEL, executionId);
  node.listener.wakeDelivered(executionId);
}

export function announceEvents(node: { readonly notifier: Notifier; readonly listener: NodeListener }, executionId: string): void {
  node.notifier.notify(EVENTS_CHANNEL, executionId);
  node.listener.wake(executionId);
}
