/** One Server-Sent Event as the wire format defines it (WHATWG HTML, "Server-sent events"). */
export interface SseMessage {
  /** The `id:` field when the message carried one. */
  readonly id?: string;
  /** The `event:` field; `message` when absent. */
  readonly event: string;
  /** The `data:` lines, joined with `\n`. */
  readonly data: string;
}

/**
 * Incremental parser: feed it decoded text in any pieces (a line or a multi-byte character may
 * be split across network chunks) and it answers the complete messages. Comment lines
 * (`: keepalive`) are skipped; a message without `data:` is not dispatched, as the standard says.
 */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;

  push(text: string): SseMessage[] {
    this.buffer += text;
    const messages: SseMessage[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next piece.
      if (end === -1 || (this.buffer[end] === '\r' && end === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (this.buffer.startsWith('\r\n', end) ? 2 : 1));
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      default:
        // `retry:` and unknown fields: the reconnection policy is the client's own.
        break;
    }
    return undefined;
  }

  private dispatch(): SseMessage | undefined {
    const message = this.hasData ? { ...(this.id !== undefined ? { id: this.id } : {}), event: this.event || 'message', data: this.data.join('\n') } : undefined;
    // The id is per message here: every OpenBot event names its own, and a stale one must not stick.
    this.id = undefined;
    this.event = '';
    this.data = [];
    this.hasData = false;
    return message;
  }
}
