import type { StreamItem } from './events';
import { ReplyText, replyText } from './reply-text';

/**
 * A Turn whose first model attempt broke mid-stream and was asked again, as a server sent it
 * (recorded from test/e2e/client.spec.ts over SSE).
 */
const RETRIED: StreamItem[] = [
  { seq: 1, type: 'model.started', at: '2026-12-07T23:13:13.818Z', step: 1, attempt: 1 },
  { text: 'Abandoned ', seq: 2, type: 'text.delta', at: '2026-12-07T23:13:13.840Z', step: 1, attempt: 1 },
  { text: 'draft', seq: 3, type: 'text.delta', at: '2026-12-07T23:13:13.899Z', step: 1, attempt: 1 },
  { category: 'unavailable', retrying: true, seq: 4, type: 'model.failed', at: '2026-12-07T23:13:13.904Z', step: 1, attempt: 1 },
  { seq: 5, type: 'model.started', at: '2026-12-07T23:13:14.094Z', step: 1, attempt: 2 },
  { text: 'Kept ', seq: 6, type: 'text.delta', at: '2026-12-07T23:13:14.097Z', step: 1, attempt: 2 },
  { text: 'answer', seq: 7, type: 'text.delta', at: '2026-12-07T23:13:14.116Z', step: 1, attempt: 2 },
  { usage: { inputTokens: 9, outputTokens: 2 }, seq: 8, type: 'model.completed', at: '2026-12-07T23:13:14.118Z', step: 1, attempt: 2 },
  { stop: null, state: 'completed', seq: 9, type: 'execution.ended', at: '2026-12-07T23:13:14.178Z' },
];

/** Folds the items one by one, keeping the reply after each and what each dropped. */
function fold(items: readonly StreamItem[]): { texts: string[]; dropped: string[]; reply: ReplyText } {
  const reply = new ReplyText();
  const texts: string[] = [];
  const dropped: string[] = [];
  for (const item of items) {
    const gone = reply.push(item);
    if (gone !== '') dropped.push(gone);
    texts.push(reply.text);
  }
  return { texts, dropped, reply };
}

describe('ReplyText', () => {
  it("drops the broken attempt's text when the step's next attempt starts, and answers what it dropped", () => {
    const { texts, dropped, reply } = fold(RETRIED);
    expect(texts).toEqual(['', 'Abandoned ', 'Abandoned draft', 'Abandoned draft', '', 'Kept ', 'Kept answer', 'Kept answer', 'Kept answer']);
    expect(dropped).toEqual(['Abandoned draft']);
    expect(reply.text).toBe('Kept answer');
    expect(replyText(RETRIED)).toBe('Kept answer');
  });

  it('keeps earlier steps, ignores a late delta of a replaced attempt, and skips stream faults', () => {
    // Step 1 said something before its tool call; step 2 broke once; a delta of its first attempt came late.
    const items: StreamItem[] = [
      { seq: 1, type: 'model.started', at: '', step: 1, attempt: 1 },
      { seq: 2, type: 'text.delta', at: '', step: 1, attempt: 1, text: 'Looking. ' },
      { seq: 3, type: 'model.completed', at: '', step: 1, attempt: 1, usage: null },
      { seq: 4, type: 'tool.called', at: '', step: 1, callId: 'c1', name: 'lookup' },
      { seq: 5, type: 'tool.result', at: '', step: 1, callId: 'c1' },
      { seq: 6, type: 'model.started', at: '', step: 2, attempt: 1 },
      { seq: 7, type: 'text.delta', at: '', step: 2, attempt: 1, text: 'Half' },
      { seq: null, type: 'error', error: { type: 'RequestFailed', category: 'internal', errorId: 'e1' } },
      { seq: 8, type: 'model.started', at: '', step: 2, attempt: 2 },
      { seq: 9, type: 'text.delta', at: '', step: 2, attempt: 1, text: ' late' },
      { seq: 10, type: 'text.delta', at: '', step: 2, attempt: 2, text: 'Found it.' },
      { seq: 11, type: 'execution.ended', at: '', state: 'completed' },
    ];
    const { dropped, reply } = fold(items);
    expect(dropped).toEqual(['Half']);
    expect(reply.text).toBe('Looking. Found it.');
    expect(replyText(items)).toBe('Looking. Found it.');
  });
});
