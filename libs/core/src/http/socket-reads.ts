import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/** What Node's stream handle (TCP or TLS) offers to stop and start reading the kernel's buffer. */
interface ReadHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

/** The tracked socket whose bytes the HTTP parser is taking right now; cleared once that parse is over. */
let parsing: Socket | null = null;

/**
 * undici's connector whose sockets say when their bytes are parsed (decision 063): undici takes
 * bytes with `socket.read()` and parses them before it returns, so while a body's `data` handler
 * runs, `parsingSocket()` names the socket its chunk came from. A paced model stream uses that to
 * stop the socket's reads the moment it is held, so what the provider sends meanwhile stays in
 * the kernel and is read at the pacer's next tick, in one read.
 */
export function trackedConnector(options: buildConnector.BuildOptions & { readonly highWaterMark?: number }): buildConnector.connector {
  const connect = buildConnector(options);
  return (opts, callback) =>
    connect(opts, (...args) => {
      // A failed connect (refused, timed out) calls back with the error alone: no socket to track.
      if (args[0] === null) track(args[1]);
      callback(...args);
    });
}

function track(socket: Socket): void {
  const read = socket.read.bind(socket);
  socket.read = (size?: number): unknown => {
    const chunk: unknown = read(size);
    if (chunk !== null) {
      parsing = socket;
      // The parse runs before the current task ends: no later chunk of another socket is named by it.
      queueMicrotask(() => {
        if (parsing === socket) parsing = null;
      });
    }
    return chunk;
  };
}

/** The tracked socket whose bytes are being parsed, if any (see `trackedConnector`). */
export function parsingSocket(): Socket | null {
  return parsing;
}

/** Stops reading the socket's kernel buffer now, as Node itself does when a stream is full. */
export function stopReads(socket: Socket): void {
  const handle = handleOf(socket);
  if (handle === null || !handle.reading) return;
  handle.reading = false;
  handle.readStop();
}

/** Reads the socket's kernel buffer again, as Node itself does when a stream wants more. */
export function startReads(socket: Socket): void {
  const handle = handleOf(socket);
  if (handle === null || handle.reading || socket.destroyed) return;
  handle.reading = true;
  handle.readStart();
}

function handleOf(socket: Socket): ReadHandle | null {
  // Node's own handle, not in its types.
  const handle = (socket as Socket & { _handle?: Partial<ReadHandle> | null })._handle;
  return handle != null && typeof handle.readStop === 'function' && typeof handle.readStart === 'function' ? (handle as ReadHandle) : null;
}
