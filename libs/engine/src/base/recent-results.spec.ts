import { fitsWithin, RecentResults } from './recent-results';

describe('RecentResults', () => {
  it('answers a kept result as its JSON reads back, a fresh value each time', () => {
    const recent = new RecentResults();
    const result = { at: new Date(0), list: [1, 'two'], gone: undefined } as never;
    recent.completed('a', result);
    const first = recent.get('a') as { list: unknown[] };
    expect(first).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', list: [1, 'two'] });
    first.list.push(3);
    expect(recent.get('a')).toStrictEqual({ at: '1970-01-01T00:00:00.000Z', list: [1, 'two'] });
    expect(recent.get('b')).toBeUndefined();
  });

  it('keeps a null result (a completed end without one) apart from none kept', () => {
    const recent = new RecentResults();
    recent.completed('a', null);
    expect(recent.get('a')).toBeNull();
  });

  it('keeps only the most recent ends', () => {
    const recent = new RecentResults(2);
    recent.completed('a', 1);
    recent.completed('b', 2);
    recent.completed('c', 3);
    expect([recent.get('a'), recent.get('b'), recent.get('c')]).toEqual([undefined, 2, 3]);
  });

  it('does not keep a result larger than its limit', () => {
    const recent = new RecentResults(10, 100);
    recent.completed('small', 'x'.repeat(90));
    recent.completed('large', 'x'.repeat(200));
    recent.completed('many', Array.from({ length: 60 }, (_, i) => i));
    expect(recent.get('small')).toBe('x'.repeat(90));
    expect(recent.get('large')).toBeUndefined();
    expect(recent.get('many')).toBeUndefined();
  });

  it('forgets a result once its time is up', () => {
    const recent = new RecentResults(10, 100, -1);
    recent.completed('a', 1);
    expect(recent.get('a')).toBeUndefined();
  });

  it('estimates sizes from above and stops early', () => {
    expect(fitsWithin({ a: 'x'.repeat(10) }, 30)).toBe(true);
    expect(fitsWithin({ a: 'x'.repeat(40) }, 30)).toBe(false);
    expect(fitsWithin([[[['deep']]]], 20)).toBe(true);
  });
});
