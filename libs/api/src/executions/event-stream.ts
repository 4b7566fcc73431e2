import type { ExecutionEvent } from '@openbot/features';
import type { ServerResponse } from 'node:http';

/**
 * Frames already encoded, by event: the events a node hands its readers in memory are shared
 * objects (frozen), so ten readers of one Turn encode each event once, not ten times, and as
 * bytes, so no socket write converts the same text to UTF-8 again.
 */
const encoded = new WeakMap<ExecutionEvent, Buffer>();

/** One Server-Sent Event: `id` is the sequence number, `event` the type, `data` the JSON. */
export function formatSse(event: ExecutionEvent): Buffer {
  let frame = encoded.get(event);
  if (frame === undefined) {
    frame = Buffer.from(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`, 'utf8');
    encoded.set(event, frame);
  }
  return frame;
}

/**
 * Writes to a raw response, waiting for the socket when it is full (a slow reader slows the reads,
 * not memory). Answers nothing when the write was taken at once: the common case allocates no promise.
 */
export function writeChunk(raw: ServerResponse, chunk: string | Buffer): Promise<void> | undefined {
  if (raw.destroyed || raw.writableEnded) throw new Error('stream closed');
  if (raw.write(chunk)) return undefined;
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      raw.off('drain', done);
      raw.off('close', closed);
      resolve();
    };
    const closed = (): void => {
      raw.off('drain', done);
      reject(new Error('stream closed'));
    };
    raw.once('drain', done);
    raw.once('close', closed);
  });
}
