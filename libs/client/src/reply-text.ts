import type { ExecutionEvent, StreamFault, StreamItem } from './events';

/**
 * A Turn's reply folded from its events as they arrive (docs/http-api.md "Executions and events").
 * The reply is the `text.delta` texts of the last attempt of each step: when a model call is asked
 * again (a broken stream, a provider's 5xx), the step's new attempt starts with its own
 * `model.started { step, attempt }` and the text of the earlier attempt is no longer part of the
 * reply. `push` answers that dropped text, so a live view can take it back; a late `text.delta`
 * of an earlier attempt is ignored. Other events change nothing.
 *
 *   const reply = new ReplyText();
 *   for await (const event of streamEvents(client, executionId)) {
 *     const dropped = reply.push(event);
 *     if (dropped !== '') redraw(reply.text); else if (event.type === 'text.delta') append(event.text);
 *   }
 */
export class ReplyText {
  /** Each step's current attempt and its text so far. */
  private readonly steps = new Map<number, { attempt: number; text: string }>();

  /** Folds one event in; answers the text of an earlier attempt it dropped ('' when none). */
  push(event: ExecutionEvent | StreamFault): string {
    if (event.seq === null || (event.type !== 'model.started' && event.type !== 'text.delta')) return '';
    const step = typeof event.step === 'number' ? event.step : 1;
    const attempt = typeof event.attempt === 'number' ? event.attempt : 1;
    const current = this.steps.get(step);
    if (current !== undefined && attempt < current.attempt) return '';
    let dropped = '';
    let folded = current;
    if (folded === undefined || attempt > folded.attempt) {
      dropped = folded?.text ?? '';
      folded = { attempt, text: '' };
      this.steps.set(step, folded);
    }
    if (event.type === 'text.delta' && typeof event.text === 'string') folded.text += event.text;
    return dropped;
  }

  /** The reply so far: each step's current attempt, in step order. */
  get text(): string {
    return [...this.steps.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, folded]) => folded.text)
      .join('');
  }
}

/** The assistant's reply in a list of events: the `text.delta` texts of the last attempt of each step (docs/http-api.md), folded by `ReplyText`. */
export function replyText(events: Iterable<StreamItem>): string {
  const reply = new ReplyText();
  for (const event of events) reply.push(event);
  return reply.text;
}
