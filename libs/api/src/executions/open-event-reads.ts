import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

/** The reason a read was ended by the node's shutdown (`signal.reason`). */
export const NODE_SHUTDOWN = Symbol('node shutdown');

/**
 * The node's open event reads: SSE streams and long polls that wait. At shutdown they end
 * cleanly (a stream after a whole event, with a comment; a waiting poll with the events it has),
 * so the HTTP server can close at once instead of holding them until the shutdown timeout and
 * exiting with an error. Nothing is lost: a client resumes on another node with `Last-Event-ID`
 * or `after`. A read opened while the node shuts down ends the same way at once.
 */
@Injectable()
export class OpenEventReads implements BeforeApplicationShutdown {
  private readonly open = new Set<AbortController>();
  private closing = false;

  /** Ends `read` (aborts it with NODE_SHUTDOWN) when the node shuts down; call the answer once the read is over. */
  track(read: AbortController): () => void {
    if (this.closing) {
      read.abort(NODE_SHUTDOWN);
      return () => undefined;
    }
    this.open.add(read);
    return () => void this.open.delete(read);
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const read of this.open) read.abort(NODE_SHUTDOWN);
    this.open.clear();
  }
}
