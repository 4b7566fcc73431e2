import type { ChatMessage } from '../model/chat';
import { ModelFailure } from '../model/model-provider';
import { estimateMessageTokens, estimatePromptTokens, fitToContext, MESSAGE_OVERHEAD_TOKENS, modelLimits } from './context-window';

const text = (role: 'user' | 'assistant', tokens: number, tag: string): ChatMessage => ({ role, content: tag.padEnd(tokens * 4, '.') });

describe('context window', () => {
  it('estimates about 4 characters per token plus a per-message overhead', () => {
    expect(estimateMessageTokens({ role: 'user', content: 'x'.repeat(40) })).toBe(10 + MESSAGE_OVERHEAD_TOKENS);
    expect(estimateMessageTokens({ role: 'user', content: '' })).toBe(MESSAGE_OVERHEAD_TOKENS);
    const withCall: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ callId: 'c1', name: 'f', arguments: '{}' }] };
    expect(estimateMessageTokens(withCall)).toBeGreaterThan(MESSAGE_OVERHEAD_TOKENS);
  });

  it('looks up limits per model with a fallback', () => {
    const known = { small: { contextTokens: 8_192, maxOutputTokens: 1_024 } };
    expect(modelLimits('small', known).contextTokens).toBe(8_192);
    expect(modelLimits('other', known).contextTokens).toBe(128_000);
  });

  it('keeps everything when the prompt fits', () => {
    const messages = [text('user', 10, 'a'), text('assistant', 10, 'b')];
    const fit = fitToContext(messages, { contextTokens: 1_000, maxOutputTokens: 100 });
    expect(fit.messages).toEqual(messages);
    expect(fit.dropped).toBe(0);
  });

  it('drops the oldest non-system messages first and keeps the system message and the newest input', () => {
    const system: ChatMessage = { role: 'system', content: 'rules' };
    const old = text('user', 100, 'old');
    const reply = text('assistant', 100, 'reply');
    const recent = text('user', 100, 'recent');
    const fit = fitToContext([system, old, reply, recent], { contextTokens: 300, maxOutputTokens: 50 });
    expect(fit.messages).toEqual([system, reply, recent]);
    expect(fit.dropped).toBe(1);
    expect(fit.estimatedTokens).toBeLessThanOrEqual(250);
  });

  it('drops an assistant tool call together with all of its tool results, never splitting them', () => {
    const call: ChatMessage = {
      role: 'assistant',
      content: '',
      toolCalls: [
        { callId: 'c1', name: 'search', arguments: '{"q":"a"}' },
        { callId: 'c2', name: 'search', arguments: '{"q":"b"}' },
      ],
    };
    const result1: ChatMessage = { role: 'tool', content: 'r1'.padEnd(200, '.'), toolCallId: 'c1' };
    const result2: ChatMessage = { role: 'tool', content: 'r2'.padEnd(200, '.'), toolCallId: 'c2' };
    const question = text('user', 20, 'q');
    const answer = text('assistant', 20, 'a');
    const next = text('user', 20, 'n');
    const messages = [question, call, result1, result2, answer, next];
    const total = estimatePromptTokens(messages);

    // Budget that is just too small for everything: dropping the first question is enough.
    const small = fitToContext(messages, { contextTokens: total - 1, maxOutputTokens: 0 });
    expect(small.messages).toEqual([call, result1, result2, answer, next]);

    // A budget that cannot hold the tool pair: the call and both results go together.
    const tiny = fitToContext(messages, { contextTokens: total - 60, maxOutputTokens: 0 });
    expect(tiny.messages).toEqual([answer, next]);
    for (const fit of [small, tiny]) {
      const ids = new Set(fit.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.callId));
      for (const m of fit.messages) if (m.role === 'tool') expect(ids.has(m.toolCallId!)).toBe(true);
    }
  });

  it('fails with context-too-long when even the newest input alone does not fit', () => {
    const messages = [text('user', 10, 'a'), text('user', 500, 'huge')];
    expect(() => fitToContext(messages, { contextTokens: 300, maxOutputTokens: 50 })).toThrow(ModelFailure);
    try {
      fitToContext(messages, { contextTokens: 300, maxOutputTokens: 50 });
    } catch (error) {
      expect((error as ModelFailure).category).toBe('context-too-long');
    }
  });
});
