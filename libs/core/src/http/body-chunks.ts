import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { HeldStream, ReadPacer } from './read-pacer';
import { parsingSocket, startReads, stopReads } from './socket-reads';

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
 * After the tick's reads the body waits again, with its socket's reads stopped when the socket is
 * known (socket-reads.ts).
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
  /**
   * The socket the chunks come from (a tracked one, socket-reads.ts): a hold stops its reads at
   * once. undefined before the first chunk; null when unknown, or when chunks came from more than
   * one socket (then a hold pauses the body only).
   */
  private socket: Socket | null | undefined;
  private readonly waiting: HeldStream = {
    resume: () => {
      this.held = false;
      if (this.socket) startReads(this.socket);
      if (!this.full) this.body.resume();
    },
    again: () => {
      // Between two parses (no chunk is being read), and before the body's end was parsed: the
      // socket still carries this response, and stopping its reads cannot stall another request.
      if (!this.socket || !this.pacing || this.held || this.full || this.ended || this.body.destroyed || !this.pacer!.holding) return;
      this.hold();
      stopReads(this.socket);
    },
  };

  constructor(
    private readonly body: Readable,
    private readonly pacer?: ReadPacer,
  ) {
    body.on('data', (chunk: Uint8Array) => {
      if (this.pacer !== undefined && this.socket !== null) {
        const socket = parsingSocket();
        if (this.socket === undefined) this.socket = socket;
        else if (socket !== this.socket) this.socket = null;
      }
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

  /**
   * Waits for the next tick. Held on a chunk, the body stops the parser after its next chunk,
   * and the socket after one more read; the socket's reads are stopped at once only once the
   * tick's reads are over (`again`): in a parse, the response may end in the same bytes, and
   * undici would hand the socket to the next request.
   */
  private hold(): void {
    this.held = true;
    this.body.pause();
    this.pacer!.atNextTick(this.waiting);
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
