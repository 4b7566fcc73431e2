import { fitOutput, outputWithinMicros } from './output-fit';
import { costOf, type Price } from './prices';

const price: Price = { id: 'p', inputPerMillionMicros: 1_000_000n, outputPerMillionMicros: 3_000_000n, cachedInputPerMillionMicros: 1_000_000n };
const standing = (id: string, over: { limitMicros?: bigint; limitTokens?: bigint; spent?: bigint; reserved?: bigint }) => ({
  id,
  limitMicros: over.limitMicros ?? null,
  limitTokens: over.limitTokens ?? null,
  spentMicros: over.limitMicros !== undefined ? (over.spent ?? 0n) : 0n,
  spentTokens: over.limitTokens !== undefined ? (over.spent ?? 0n) : 0n,
  reservedMicros: over.limitMicros !== undefined ? (over.reserved ?? 0n) : 0n,
  reservedTokens: over.limitTokens !== undefined ? (over.reserved ?? 0n) : 0n,
});
const request = { price, estimatedInputTokens: 100, maxTokens: 4_096, minTokens: 256 };
const none = { capRoomMicros: null, budgets: [], credits: null };

describe('output fit (decision 081)', () => {
  it('[PLAT-08] the most output tokens a money limit affords is exact against the cost formula: one more would cost more than is left', () => {
    for (const left of [101n, 102n, 103n, 104n, 1_000n, 12_345n]) {
      const n = outputWithinMicros(request, left, 1_000_000n);
      expect(costOf(price, { inputTokens: 100, outputTokens: Number(n) })).toBeLessThanOrEqual(Number(left));
      expect(costOf(price, { inputTokens: 100, outputTokens: Number(n) + 1 })).toBeGreaterThan(Number(left));
    }
    expect(outputWithinMicros(request, 99n, 10n)).toBe(-1n);
    expect(outputWithinMicros({ price: null, estimatedInputTokens: 100 }, 0n, 10n)).toBe(10n);
    expect(outputWithinMicros({ price: null, estimatedInputTokens: 100 }, -1n, 10n)).toBe(-1n);
  });

  it('[PLAT-08] the tightest limit sets max_tokens; below the floor the first limit in the reservation’s order refuses; the floor never exceeds what the call asks for', () => {
    expect(fitOutput(request, none)).toEqual({ maxTokens: 4_096 });
    const budgets = [standing('a', { limitTokens: 2_000n, spent: 500n }), standing('b', { limitMicros: 10_000n, reserved: 1_000n })];
    // a: 1,500 − 100 = 1,400 tokens; b: (9,000 − 100) / 3 = 2,966; credits: (1,200 − 100) / 3 = 366.
    expect(fitOutput(request, { capRoomMicros: 5_000n, budgets, credits: { balanceMicros: 1_300n, reservedMicros: 100n } })).toEqual({ maxTokens: 366 });
    expect(fitOutput(request, { capRoomMicros: 5_000n, budgets, credits: { balanceMicros: 800n, reservedMicros: 100n } })).toEqual({ refused: { budgetId: null } });
    expect(fitOutput(request, { capRoomMicros: 800n, budgets, credits: null })).toEqual({ refused: { maxCost: true } });
    expect(fitOutput(request, { capRoomMicros: null, budgets: [standing('c', { limitTokens: 355n })], credits: null })).toEqual({ refused: { budgetId: 'c' } });
    expect(fitOutput(request, { capRoomMicros: null, budgets: [standing('c', { limitTokens: 356n })], credits: null })).toEqual({ maxTokens: 256 });
    // A call that asks for less than the floor (the Bot's own output limit) still sends what it asks for when it fits.
    expect(fitOutput({ ...request, maxTokens: 50 }, { capRoomMicros: null, budgets: [standing('c', { limitTokens: 150n })], credits: null })).toEqual({ maxTokens: 50 });
    // A budget with nothing left refuses even a call that costs nothing.
    expect(fitOutput({ ...request, price: null }, { capRoomMicros: null, budgets: [standing('d', { limitMicros: 10n, spent: 10n })], credits: null })).toEqual({ refused: { budgetId: 'd' } });
  });
});
