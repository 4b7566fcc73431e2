import { isUuid } from './ids';
import { newId } from './new-id';

describe('newId (UUIDv7)', () => {
  it('is a lower-case UUID of version 7 with the RFC 9562 variant bits', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newId();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isUuid(id)).toBe(true);
      const bytes = Buffer.from(id.replaceAll('-', ''), 'hex');
      expect(bytes[6]! >> 4).toBe(0x7);
      expect(bytes[8]! >> 6).toBe(0b10);
    }
  });

  it('starts with the current Unix time in milliseconds', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    const ms = parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    // The in-millisecond counter may borrow a few ms ahead when it overflows.
    expect(ms).toBeLessThanOrEqual(after + 5);
  });

  it('10,000 IDs are unique and strictly increasing in string order', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    expect(new Set(ids).size).toBe(10_000);
    for (let i = 1; i < ids.length; i++) {
      if (!(ids[i - 1]! < ids[i]!)) throw new Error(`ID ${i} ${ids[i]} does not sort after ${ids[i - 1]}`);
    }
  });

  it('stays ordered when more than 4096 IDs are made within one millisecond (counter overflow)', () => {
    const realNow = Date.now;
    const frozen = realNow() + 10;
    Date.now = () => frozen;
    try {
      const ids = Array.from({ length: 10_000 }, () => newId());
      expect(new Set(ids).size).toBe(10_000);
      for (let i = 1; i < ids.length; i++) {
        if (!(ids[i - 1]! < ids[i]!)) throw new Error(`ID ${i} ${ids[i]} does not sort after ${ids[i - 1]}`);
      }
    } finally {
      Date.now = realNow;
    }
  });

  it('stays ordered when the clock steps backwards', () => {
    const realNow = Date.now;
    const base = realNow() + 60_000;
    let now = base;
    Date.now = () => now;
    try {
      const first = newId();
      now = base - 5_000;
      const second = newId();
      expect(second > first).toBe(true);
    } finally {
      Date.now = realNow;
    }
  });
});
