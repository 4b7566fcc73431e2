import type { ExecutionEvent } from '@openbot/client';
import type { Io } from './output';
import { ReplyPrinter, rowsSpanned } from './reply-printer';

function io(interactive: boolean, columns = 80): Io & { written: string[] } {
  const written: string[] = [];
  return { written, out: (text) => void written.push(text), err: () => undefined, interactive, columns };
}

let seq = 0;
const started = (step: number, attempt: number): ExecutionEvent => ({ seq: ++seq, type: 'model.started', at: '', step, attempt });
const delta = (step: number, attempt: number, text: string): ExecutionEvent => ({ seq: ++seq, type: 'text.delta', at: '', step, attempt, text });
const completed = (step: number, attempt: number): ExecutionEvent => ({ seq: ++seq, type: 'model.completed', at: '', step, attempt, usage: null });

/** Step 1 fails mid-way on attempt 1 and is retried; step 2 follows a tool call. */
const RETRIED = [
  started(1, 1),
  delta(1, 1, 'Hel'),
  delta(1, 1, 'lo wor'),
  started(1, 2),
  delta(1, 2, 'Hello '),
  delta(1, 2, 'world.'),
  completed(1, 2),
  { seq: ++seq, type: 'tool.called', at: '', step: 1, callId: 'c1', name: 'lookup' },
  started(2, 1),
  delta(2, 1, ' Done'),
  completed(2, 1),
];

describe('ReplyPrinter', () => {
  it('into a pipe: writes each step once its model call completed, so the output is exactly the reply and a final newline', () => {
    const out = io(false);
    const printer = new ReplyPrinter(out);
    for (const event of RETRIED) printer.push(event);
    printer.end();
    expect(out.written.join('')).toBe('Hello world. Done\n');
    expect(out.written).toEqual(['Hello world.', ' Done', '\n']);
  });

  it('adds no second newline to a reply that already ends with one, and none to an empty reply', () => {
    for (const interactive of [false, true]) {
      const out = io(interactive);
      const printer = new ReplyPrinter(out);
      printer.push(started(1, 1));
      printer.push(delta(1, 1, 'Line one.\n'));
      printer.push(completed(1, 1));
      printer.end();
      expect(out.written.join('')).toBe('Line one.\n');

      const empty = io(interactive);
      const silent = new ReplyPrinter(empty);
      silent.push(started(1, 1));
      silent.push(completed(1, 1));
      silent.end();
      expect(empty.written).toEqual([]);
    }
  });

  it('on a terminal: an erased attempt that ended with a newline does not stand in for the final newline', () => {
    const out = io(true);
    const printer = new ReplyPrinter(out);
    printer.push(started(1, 1));
    printer.push(delta(1, 1, 'Hi.'));
    printer.push(completed(1, 1));
    printer.push(started(2, 1));
    printer.push(delta(2, 1, ' Wrong.\n'));
    // The retry is cut short (the Turn was cancelled): the screen shows 'Hi.' and the cursor after it.
    printer.push(started(2, 2));
    printer.end();
    expect(out.written).toEqual(['Hi.', ' Wrong.\n', '\x1b[1A\x1b[4G\x1b[J', '\n']);
  });

  it('on a terminal: writes live, erases an abandoned attempt, ends with a newline', () => {
    const out = io(true);
    const printer = new ReplyPrinter(out);
    for (const event of RETRIED) printer.push(event);
    printer.end();
    expect(out.written).toEqual(['Hel', 'lo wor', '\x1b[1G\x1b[J', 'Hello ', 'world.', ' Done', '\n']);
  });

  it('on a terminal: erasing text that wrapped moves up the rows it took', () => {
    const out = io(true, 10);
    const printer = new ReplyPrinter(out);
    printer.push(started(1, 1));
    printer.push(delta(1, 1, 'abc'));
    printer.push(completed(1, 1));
    printer.push(started(2, 1));
    printer.push(delta(2, 1, 'defghijklmnop\nq'));
    printer.push(started(2, 2));
    // 'defghij' fills row 1 from column 3, 'klmnop' wraps to row 2, '\n' goes to row 3.
    expect(out.written.at(-1)).toBe('\x1b[2A\x1b[4G\x1b[J');
  });

  it('keeps the partial text of a Turn stopped mid-step', () => {
    const out = io(false);
    const printer = new ReplyPrinter(out);
    printer.push(started(1, 1));
    printer.push(delta(1, 1, 'partial'));
    printer.end();
    expect(out.written.join('')).toBe('partial\n');
  });
});

describe('rowsSpanned', () => {
  it('counts newlines and lazy wraps', () => {
    expect(rowsSpanned('abc', 0, 10)).toBe(0);
    expect(rowsSpanned('0123456789', 0, 10)).toBe(0);
    expect(rowsSpanned('0123456789x', 0, 10)).toBe(1);
    expect(rowsSpanned('a\nb\n', 5, 10)).toBe(2);
  });
});

describe('ReplyPrinter.note', () => {
  const both = (interactive: boolean) => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (text: string) => void out.push(text), err: (text: string) => void err.push(text), interactive, columns: 80 } };
  };
  const step = [started(1, 1), delta(1, 1, 'Checking'), completed(1, 1)];

  it('into a pipe: the note goes to stderr and stdout stays exactly the reply', () => {
    const { out, err, io: pipe } = both(false);
    const printer = new ReplyPrinter(pipe);
    for (const event of step) printer.push(event);
    printer.note('Waiting for approval.\n');
    printer.end();
    expect(out.join('')).toBe('Checking\n');
    expect(err).toEqual(['Waiting for approval.\n']);
  });

  it('on a terminal: the reply line is ended before the note, so the two never share a line', () => {
    const { out, err, io: terminal } = both(true);
    const printer = new ReplyPrinter(terminal);
    for (const event of step) printer.push(event);
    printer.note('Waiting for approval.\n');
    expect(out.join('')).toBe('Checking\n');
    expect(err).toEqual(['Waiting for approval.\n']);
  });
});
