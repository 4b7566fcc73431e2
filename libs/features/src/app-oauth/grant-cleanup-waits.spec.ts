import { backoffMs } from '@openbot/engine';
import { CLEANUP_WAITS } from './grant-cleanup.workflow';

describe('grant cleanup waits (decision 067)', () => {
  it('[GRANT-04] the durable timer between looks grows from 2 s and never exceeds 10 minutes', () => {
    const waits = Array.from({ length: 12 }, (_, i) => backoffMs(i + 1, CLEANUP_WAITS));
    expect(waits.slice(0, 5)).toEqual([2_000, 4_000, 8_000, 16_000, 32_000]);
    expect(waits.every((ms, i) => i === 0 || ms >= waits[i - 1]!)).toBe(true);
    expect(Math.max(...waits)).toBe(600_000);
    expect(backoffMs(1_000, CLEANUP_WAITS)).toBe(600_000);
  });

  it('the engine’s own retries keep their steps: 100 ms doubling to 5 s', () => {
    expect([1, 2, 3, 7, 50].map((attempt) => backoffMs(attempt))).toEqual([100, 200, 400, 5_000, 5_000]);
  });
});
