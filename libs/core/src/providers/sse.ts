/**
 * A minimal Server-Sent Events decoder: feed it text as it arrives, get back the `data` payloads of
 * complete events. Only `data:` fields matter for model streams; `event:`, `id:` and comments are skipped.
 */
export class SseDecoder {
  private buffer = '';
  private data: string[] = [];

  push(text: string): string[] {
    this.buffer += text;
    const payloads: string[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      // A lone trailing \r may be the first half of \r\n: wait for the next chunk.
      if (width === 1 && this.buffer[newline] === '\r' && newline === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(newline + width);
      if (line === '') {
        if (this.data.length > 0) payloads.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
    return payloads;
  }

  /** The stream ended: an event without its closing blank line still counts. */
  end(): string[] {
    const rest = this.push('\n\n');
    this.buffer = '';
    return rest;
  }
}
