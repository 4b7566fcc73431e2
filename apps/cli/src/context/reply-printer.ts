import type { ExecutionEvent } from '@openbot/client';
import type { Io } from './output';

/**
 * Prints a Turn's reply as its events arrive. The reply is the `text.delta` texts of the last
 * attempt of each step (docs/http-api.md), so when a model call is retried (a new `model.started` for the
 * same step) the text of the abandoned attempt must disappear:
 *
 * - on a terminal the text is written live and an abandoned attempt is erased with ANSI
 *   cursor movements, so the screen always shows the attempt in progress;
 * - into a pipe or a file nothing can be taken back, so each step's text is written once the
 *   step's model call completed: the output is exactly the reply, byte for byte.
 *
 * Either way the output ends with a newline (unless the reply is empty or ends with one), so a shell
 * prompt or the next command's output starts on a line of its own; `$(openbot chat …)` drops it.
 */
export class ReplyPrinter {
  private step: number | undefined;
  private attempt: number | undefined;
  /** Text of the current attempt not yet written (pipes) or written but still erasable (terminal). */
  private current = '';
  /** Terminal: the cursor column where the current attempt's text began, and the cursor column now. */
  private startColumn = 0;
  private column = 0;
  /** The last character on the screen or in the output, and what it was before the current attempt. */
  private last = '';
  private lastBeforeAttempt = '';

  constructor(private readonly io: Io) {}

  push(event: ExecutionEvent): void {
    switch (event.type) {
      case 'model.started':
        this.begin(numberOr(event.step, 1), numberOr(event.attempt, 1));
        break;
      case 'text.delta':
        if (typeof event.text === 'string') this.text(numberOr(event.step, this.step ?? 1), numberOr(event.attempt, this.attempt ?? 1), event.text);
        break;
      case 'model.completed':
        this.commit();
        break;
      default:
        break;
    }
  }

  /**
   * A note for the person (on stderr) between steps, such as a tool call waiting for approval.
   * On a terminal the reply's line is ended first and the cursor is then at the start of a line;
   * into a pipe or a file stdout is untouched, so it stays the reply byte for byte.
   */
  note(text: string): void {
    this.commit();
    if (this.io.interactive && this.last !== '' && this.last !== '\n') this.write('\n');
    this.io.err(text);
    if (this.io.interactive) {
      this.column = 0;
      this.startColumn = 0;
    }
  }

  /** The Turn ended: write what is left (a Turn stopped mid-step keeps its partial text) and end the line. */
  end(): void {
    this.commit();
    if (this.last !== '' && this.last !== '\n') this.write('\n');
  }

  private begin(step: number, attempt: number): void {
    if (step === this.step && attempt !== this.attempt) this.discard();
    else this.commit();
    this.step = step;
    this.attempt = attempt;
    this.startColumn = this.column;
    this.lastBeforeAttempt = this.last;
  }

  private text(step: number, attempt: number, text: string): void {
    // A late delta of an abandoned attempt is not part of the reply.
    if (this.step !== undefined && (step !== this.step || attempt !== this.attempt)) return;
    this.current += text;
    if (this.io.interactive) this.write(text);
  }

  private commit(): void {
    if (!this.io.interactive && this.current !== '') this.write(this.current);
    this.current = '';
    this.startColumn = this.column;
  }

  private discard(): void {
    if (this.io.interactive && this.current !== '') {
      const rows = rowsSpanned(this.current, this.startColumn, this.io.columns);
      this.io.out(`${rows > 0 ? `\x1b[${rows}A` : ''}\x1b[${this.startColumn + 1}G\x1b[J`);
      this.column = this.startColumn;
      this.last = this.lastBeforeAttempt;
    }
    this.current = '';
  }

  private write(text: string): void {
    this.io.out(text);
    this.column = columnAfter(text, this.column, this.io.columns);
    this.last = text.at(-1) ?? this.last;
  }
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

/** How many line breaks (newlines and wraps) writing `text` from `column` causes on a terminal `width` wide. */
export function rowsSpanned(text: string, column: number, width: number): number {
  let rows = 0;
  let col = column;
  for (const char of text) {
    if (char === '\n') {
      rows += 1;
      col = 0;
    } else if (col >= width) {
      // Terminals wrap lazily: the line breaks when a character follows a full line.
      rows += 1;
      col = 1;
    } else {
      col += 1;
    }
  }
  return rows;
}

function columnAfter(text: string, column: number, width: number): number {
  let col = column;
  for (const char of text) col = char === '\n' ? 0 : col >= width ? 1 : col + 1;
  return col;
}
