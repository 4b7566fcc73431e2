import { InvalidInput } from './failures';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, parsePageRequest, toPage } from './pagination';

const CURSOR = '0193a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b';

function issuesOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInput);
    return [...(error as InvalidInput).issues];
  }
  throw new Error('expected InvalidInput');
}

describe('parsePageRequest', () => {
  it('defaults to no cursor and limit 50 when both are absent or empty', () => {
    expect(DEFAULT_PAGE_LIMIT).toBe(50);
    expect(MAX_PAGE_LIMIT).toBe(200);
    expect(parsePageRequest(undefined, undefined)).toEqual({ after: null, limit: 50 });
    expect(parsePageRequest('', '')).toEqual({ after: null, limit: 50 });
  });

  it('accepts every limit from 1 to 200', () => {
    expect(parsePageRequest(undefined, '1').limit).toBe(1);
    expect(parsePageRequest(undefined, '17').limit).toBe(17);
    expect(parsePageRequest(undefined, '200').limit).toBe(200);
  });

  it.each(['0', '201', '-1', '1.5', 'abc', '1e2', ' 5', '0x10', '99999999999999999999'])(
    'rejects limit %p with an InvalidInput issue at path "limit"',
    (limit) => {
      const issues = issuesOf(() => parsePageRequest(undefined, limit));
      expect(issues).toEqual([{ path: 'limit', message: expect.stringContaining('200') }]);
    },
  );

  it('rejects a non-string limit (repeated query parameter)', () => {
    expect(issuesOf(() => parsePageRequest(undefined, ['5', '6'])).map((i) => i.path)).toEqual(['limit']);
    expect(issuesOf(() => parsePageRequest(undefined, 5)).map((i) => i.path)).toEqual(['limit']);
  });

  it('accepts a UUID cursor and normalizes it to lower case', () => {
    expect(parsePageRequest(CURSOR, undefined)).toEqual({ after: CURSOR, limit: 50 });
    expect(parsePageRequest(CURSOR.toUpperCase(), '10')).toEqual({ after: CURSOR, limit: 10 });
  });

  it.each(['nope', '123', `${CURSOR}x`, CURSOR.replaceAll('-', '')])('rejects cursor %p with an issue at path "after"', (after) => {
    const issues = issuesOf(() => parsePageRequest(after, undefined));
    expect(issues).toEqual([{ path: 'after', message: expect.any(String) }]);
  });

  it('rejects a non-string cursor', () => {
    expect(issuesOf(() => parsePageRequest([CURSOR, CURSOR], undefined)).map((i) => i.path)).toEqual(['after']);
  });

  it('reports both invalid values at once, limit first', () => {
    const issues = issuesOf(() => parsePageRequest('bad', '0'));
    expect(issues.map((i) => i.path)).toEqual(['limit', 'after']);
  });

  it('the failure is a 400-class InvalidInput domain failure', () => {
    try {
      parsePageRequest('bad', undefined);
      throw new Error('unreachable');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInput);
      expect((error as InvalidInput).kind).toBe('invalid-input');
      expect((error as InvalidInput).type).toBe('InvalidInput');
    }
  });
});

describe('toPage', () => {
  const rows = (n: number): Array<{ id: string }> => Array.from({ length: n }, (_, i) => ({ id: `id-${i}` }));

  it('with limit + 1 rows returns limit rows and the last returned id as next', () => {
    const page = toPage(rows(4), 3);
    expect(page.data.map((r) => r.id)).toEqual(['id-0', 'id-1', 'id-2']);
    expect(page.next).toBe('id-2');
  });

  it('with exactly limit rows there is no next page', () => {
    const page = toPage(rows(3), 3);
    expect(page.data).toHaveLength(3);
    expect(page.next).toBeNull();
  });

  it('with fewer rows than the limit there is no next page', () => {
    expect(toPage(rows(1), 3)).toEqual({ data: [{ id: 'id-0' }], next: null });
  });

  it('an empty result is an empty page with no next', () => {
    expect(toPage([], 50)).toEqual({ data: [], next: null });
  });

  it('does not change the given rows', () => {
    const given = rows(5);
    toPage(given, 2);
    expect(given).toHaveLength(5);
  });
});
