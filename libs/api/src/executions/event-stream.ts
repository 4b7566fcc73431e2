import type { ExecutionEvent } from '@openbot/openbot';
import type { ServerResponse } from 'node:http';

/** One Server-Sent Event: `id` is the sequence number, `event` the type, `data` the JSON. */
export function formatSse(event: ExecutionEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Writes to a raw response, waiting for the socket when it is full (a slow reader slows the reads, not memory). */
export async function writeChunk(raw: ServerResponse, chunk: string): Promise<void> {
  if (raw.destroyed || raw.writableEnded) throw new Error('stream closed');
  if (!raw.write(chunk)) {
    await new Promise<void>((resolve, reject) => {
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
}
