import { SseDecoder, SseTooLarge } from './sse';

describe('SseDecoder', () => {
  it('decodes events split anywhere, with LF, CRLF and lone CR line ends, skipping comments and other fields', () => {
    const decoder = new SseDecoder();
    const pieces = [': hi\r\n\r\nevent: x\ndata: one', '\r', '\ndata:two\r\rdata: three\n', '\n', 'id: 7\ndata: [DO', 'NE]\r\n\r\n'];
    const payloads = pieces.flatMap((piece) => decoder.push(piece));
    expect(payloads).toEqual(['one\ntwo', 'three', '[DONE]']);
  });

  it('a CR at the end of one chunk and the LF starting the next are one line break', () => {
    const decoder = new SseDecoder();
    expect([...decoder.push('data: a\r'), ...decoder.push('\n'), ...decoder.push('\r\n')]).toEqual(['a']);
  });

  it('end() completes an event that lacks its closing blank line', () => {
    const decoder = new SseDecoder();
    expect(decoder.push('data: last')).toEqual([]);
    expect(decoder.end()).toEqual(['last']);
  });

  it('security: an endless line is refused once it passes the line limit, and what it held is dropped', () => {
    const decoder = new SseDecoder({ maxLineLength: 1_000, maxEventLength: 10_000 });
    decoder.push('data: ');
    expect(() => {
      for (let i = 0; i < 100; i++) decoder.push('x'.repeat(100));
    }).toThrow(SseTooLarge);
  });

  it('security: an event of many short lines is refused past the event limit', () => {
    const decoder = new SseDecoder({ maxLineLength: 1_000, maxEventLength: 2_000 });
    expect(() => {
      for (let i = 0; i < 100; i++) decoder.push(`data: ${'y'.repeat(50)}\n`);
    }).toThrow(/an event longer than 2000 characters/);
  });

  it('lines and events right at the limits pass', () => {
    const decoder = new SseDecoder({ maxLineLength: 106, maxEventLength: 201 });
    const line = `data: ${'z'.repeat(100)}`;
    expect(decoder.push(`${line}\n${line}\n\n`)).toEqual([`${'z'.repeat(100)}\n${'z'.repeat(100)}`]);
  });

  it('security: scans each character once — a long line fed in tiny pieces costs linear time, not quadratic', () => {
    // Counted, not timed: the old decoder re-searched its whole buffer on every push, so the
    // characters it scanned grew with the square of the line. Count the characters given to the
    // regular expression by wrapping its exec.
    const decoder = new SseDecoder({ maxLineLength: 1_000_000, maxEventLength: 1_000_000 });
    const scanned = { chars: 0 };
    const original = RegExp.prototype.exec;
    RegExp.prototype.exec = function (this: RegExp, input: string) {
      scanned.chars += input.length - this.lastIndex;
      return original.call(this, input);
    };
    try {
      decoder.push('data: ');
      for (let i = 0; i < 20_000; i++) decoder.push('ab');
      decoder.push('\n\n');
    } finally {
      RegExp.prototype.exec = original;
    }
    expect(scanned.chars).toBeLessThan(100_000);
  });
});
