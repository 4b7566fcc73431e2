/** Longest line and longest event (joined `data` lines) a decoder keeps, in characters. */
export interface SseLimits {
  readonly maxLineLength: number;
  readonly maxEventLength: number;
}

/**
 * Generous for model streams (deltas are small; a whole tool call in one event stays far below),
 * small enough that one endless line from a provider cannot exhaust the node's memory.
 */
export const DEFAULT_SSE_LIMITS: SseLimits = { maxLineLength: 1024 * 1024, maxEventLength: 2 * 1024 * 1024 };

/** The stream sent a line or an event longer than the decoder's limit. */
export class SseTooLarge extends Error {
  override readonly name = 'SseTooLarge';
}

const LF = 10;
const CR = 13;

/**
 * A minimal Server-Sent Events decoder: feed it text as it arrives, get back the `data` payloads of
 * complete events. Only `data:` fields matter for model streams; `event:`, `id:` and comments are skipped.
 *
 * Each pushed character is scanned once: only the unfinished last line is carried over, never
 * re-scanned, and it may not grow past `maxLineLength` (nor an event past `maxEventLength`).
 */
export class SseDecoder {
  /** The unfinished line: text after the last line break. */
  private pending = '';
  /** The previous chunk ended with `\r`: a `\n` starting the next one completes that line break. */
  private afterCr = false;
  private data: string[] = [];
  private eventLength = 0;

  constructor(private readonly limits: SseLimits = DEFAULT_SSE_LIMITS) {}

  push(text: string): string[] {
    if (text === '') return [];
    const payloads: string[] = [];
    let start = this.afterCr && text.charCodeAt(0) === LF ? 1 : 0;
    this.afterCr = false;
    // Line breaks found with charCodeAt, not a regular expression: no match object per line.
    for (let end = start; end < text.length; end++) {
      const code = text.charCodeAt(end);
      if (code !== LF && code !== CR) continue;
      this.takeLine(this.pending === '' ? text.slice(start, end) : this.pending + text.slice(start, end), payloads);
      this.pending = '';
      start = end + 1;
      if (code === CR) {
        if (text.charCodeAt(start) === LF) start += 1;
        else if (start === text.length) this.afterCr = true;
        end = start - 1;
      }
    }
    const rest = text.length - start;
    if (this.pending.length + rest > this.limits.maxLineLength) throw this.tooLarge('line', this.limits.maxLineLength);
    if (rest > 0) this.pending += text.slice(start);
    return payloads;
  }

  /** The stream ended: an event without its closing blank line still counts. */
  end(): string[] {
    const rest = this.push('\n\n');
    this.pending = '';
    this.afterCr = false;
    return rest;
  }

  private takeLine(line: string, payloads: string[]): void {
    if (line.length > this.limits.maxLineLength) throw this.tooLarge('line', this.limits.maxLineLength);
    if (line === '') {
      if (this.data.length > 0) payloads.push(this.data.join('\n'));
      this.data = [];
      this.eventLength = 0;
    } else if (line.startsWith('data:')) {
      const value = line.slice(line.startsWith('data: ') ? 6 : 5);
      this.eventLength += value.length + (this.data.length > 0 ? 1 : 0);
      if (this.eventLength > this.limits.maxEventLength) throw this.tooLarge('event', this.limits.maxEventLength);
      this.data.push(value);
    }
  }

  private tooLarge(what: 'line' | 'event', limit: number): SseTooLarge {
    // The decoder is unusable after this; drop what it held.
    this.pending = '';
    this.data = [];
    this.eventLength = 0;
    return new SseTooLarge(`the stream sent ${what === 'line' ? 'a line' : 'an event'} longer than ${limit} characters`);
  }
}
