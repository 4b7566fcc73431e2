import type { Readable } from 'node:stream';
import type { ReadPacer } from './read-pacer';

/** Chunks held before the body is paused: a consumer slower than the provider stops the reads. */
const HIGH_WATER = 16;

/**
 * A response body read chunk by chunk, for a model stream's hundreds of small chunks. It listens
 * for `data` instead of iterating the stream: Node's async iterator costs a `readable` turn, a
 * `read()` and an iterator result per chunk, and a reader waits for each chunk anyway.
 *
 * `next` answers the next chunk, or null once the body ended; it throws the body's error, or a
 * premature-close error when the body closed before its end. `close` destroys a body not read to
 * its end, which releases the connection.
 *
 * With a `pacer`, once `pace` was called, a chunk read while the node is busy pauses the body
 * until the pacer's next tick (decision 063): what the provider sends meanwhile is read at once.
 */
export class BodyChunks {
  private readonly queue: Uint8Array[] = [];
  private ended = false;
  private failure: Error | null = null;
  private waiter: { resolve: (chunk: Uint8Array | null) => void; reject: (error: Error) => void } | null = null;

  /** Paused because the reader fell behind. */
  private full = false;
  /** Paused until the pacer's next tick. */
  private held = false;
  private pacing = false;

  constructor(
    private readonly body: Readable,
    private readonly pacer?: ReadPacer,
  ) {
    body.on('data', (chunk: Uint8Array) => {
      if (this.pacing && !this.held && this.pacer!.holding) this.hold();
      const waiter = this.take();
      if (waiter !== null) return waiter.resolve(chunk);
      this.queue.push(chunk);
      if (this.queue.length >= HIGH_WATER) {
        this.full = true;
        body.pause();
      }
    });
    body.once('end', () => {
      this.ended = true;
      this.take()?.resolve(null);
    });
    body.once('error', (error: Error) => this.fail(error));
    body.once('close', () => {
      if (!this.ended) this.fail(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  }

  next(): Promise<Uint8Array | null> {
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      if (this.full && this.queue.length < HIGH_WATER) {
        this.full = false;
        if (!this.held) this.body.resume();
      }
      return Promise.resolve(chunk);
    }
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** From now on reads are paced (a stream calls it once its first event went out, which never waits). */
  pace(): void {
    if (this.pacer === undefined || this.pacing) return;
    this.pacing = true;
    this.pacer.started();
  }

  close(): void {
    if (this.pacing) {
      this.pacing = false;
      this.pacer!.ended();
    }
    if (!this.ended) this.body.destroy();
  }

  private hold(): void {
    this.held = true;
    this.body.pause();
    this.pacer!.atNextTick(() => {
      this.held = false;
      if (!this.full) this.body.resume();
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.take()?.reject(this.failure);
  }

  /** The waiting reader, forgotten: each is answered once. */
  private take(): { resolve: (chunk: Uint8Array | null) => void; reject: (error: Error) => void } | null {
    const waiter = this.waiter;
    this.waiter = null;
    return waiter;
  }
}
