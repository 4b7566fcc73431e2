/** How often a busy node reads its held model streams. */
export const READ_PACE_MS = 25;
/** Model streams open on this node from which on their reads are paced. */
export const PACED_FROM_STREAMS = 8;

/** A stream waiting for the pacer's next tick. */
export interface HeldStream {
  /** Reads again: the tick has come. */
  resume(): void;
  /** The tick's reads are over: the stream may wait for the next tick at once. */
  again(): void;
}

/**
 * Reads of a node's model streams, paced while the node is busy (decision 063). A provider sends
 * each token as its own small write, and every one of them wakes the node for one read and one
 * pass through the HTTP parser and the stream decoder: with 20 streams of 200 tokens a second
 * that was most of a Turn's server CPU. While `fromStreams` or more streams are open, a stream
 * that has delivered its first event and just read a chunk waits for the pacer's next tick (every
 * `intervalMs`, one timer for the node); the tokens that arrive meanwhile stay in the kernel and
 * are then read at once. Once a tick's reads are over, the streams it resumed wait again at once,
 * their sockets' reads stopped: the node wakes for them once per tick, not once per token. A
 * lightly loaded node reads every chunk as it comes.
 *
 * The cost is latency: a later token, and the end of an answer, can wait up to `intervalMs`. The
 * first event of a stream never waits, and text deltas are published in windows of their own
 * anyway.
 */
export class ReadPacer {
  private open = 0;
  private waiting: HeldStream[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;
  private resuming = false;

  constructor(
    readonly intervalMs: number = READ_PACE_MS,
    readonly fromStreams: number = PACED_FROM_STREAMS,
  ) {}

  /** The node's pacer from its operator's settings; none with an interval of 0 (every chunk is read as it comes). */
  static configured(intervalMs: number, fromStreams: number): ReadPacer | undefined {
    return intervalMs === 0 ? undefined : new ReadPacer(intervalMs, fromStreams);
  }

  /** A model stream opened: call `ended` once it is over. */
  started(): void {
    this.open += 1;
  }

  ended(): void {
    this.open -= 1;
  }

  /**
   * Whether a stream that just read a chunk should wait for the next tick: the node is busy, and
   * the chunk was not read by the tick that just resumed the held streams (their first reads then
   * take what arrived meanwhile, and must not be held again at once).
   */
  get holding(): boolean {
    return this.open >= this.fromStreams && !this.resuming;
  }

  /** Resumes `held` at the next tick. */
  atNextTick(held: HeldStream): void {
    this.waiting.push(held);
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      // An idle pacer never keeps the process alive.
      this.timer.unref();
    }
  }

  private tick(): void {
    const due = this.waiting;
    if (due.length === 0) {
      clearInterval(this.timer!);
      this.timer = null;
      return;
    }
    this.waiting = [];
    // The reads the resumed streams make before the event loop moves on belong to this tick.
    this.resuming = true;
    for (const held of due) held.resume();
    setImmediate(() => {
      this.resuming = false;
      // Held again at once, not after one more read of their own: until the next tick, nothing wakes the node for them.
      for (const held of due) held.again();
    });
  }
}
