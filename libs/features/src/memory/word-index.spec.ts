import { randomBytes } from 'node:crypto';
import { isUuid } from '@openbot/domain';
import { parseLearned } from './learning/learning-prompt';
import { learnedItemId } from './learning/memory-learn.workflow';
import { normalizedWords, WordIndex, WordIndexes } from './word-index';

describe('memory word index', () => {
  const index = new WordIndex({ id: 'k1', key: randomBytes(32) });

  it('normalizes words: NFKC, lower case, letters and digits, no stop words, distinct', () => {
    expect(normalizedWords('The Café’s ＣＯＤＥ is 4471, the code!')).toEqual(['café', 'code', '4471']);
  });

  it('[MEM-03] keeps no plaintext: entries are keyed hashes, per Bot, equal for equal words only', () => {
    const a = index.hashes('bot-a', 'Zebra crossing');
    const b = index.hashes('bot-b', 'Zebra crossing');
    expect(a).toHaveLength(2);
    for (const entry of a) {
      expect(entry).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(entry.toLowerCase()).not.toContain('zebra');
    }
    expect(a).not.toEqual(b);
    expect(index.hashes('bot-a', 'ZEBRA')).toEqual([a[0]]);
    expect(new WordIndex({ id: 'k2', key: randomBytes(32) }).hashes('bot-a', 'zebra')).not.toEqual([a[0]]);
  });
});

describe('memory word indexes of several keys', () => {
  it('a query hashes its words under every configured key: an item indexed under a retired key still matches', () => {
    const k1 = { id: 'k1', key: randomBytes(32) };
    const k2 = { id: 'k2', key: randomBytes(32) };
    const indexes = new WordIndexes(k2, [k1]);
    expect(indexes.current.keyId).toBe('k2');
    const query = indexes.query('bot-a', 'Zebra crossing');
    expect(query.words).toBe(2);
    expect(query.hashes).toEqual(expect.arrayContaining([...new WordIndex(k1).hashes('bot-a', 'zebra crossing'), ...new WordIndex(k2).hashes('bot-a', 'zebra crossing')]));
    expect(query.hashes).toHaveLength(4);
    expect(new WordIndexes(k2).query('bot-a', 'Zebra crossing')).toEqual({ hashes: new WordIndex(k2).hashes('bot-a', 'zebra crossing'), words: 2 });
  });
});

describe('learning answers', () => {
  it('takes well-formed items from the JSON in the answer and ignores the rest', () => {
    expect(parseLearned('Sure! {"memories":[{"content":" Likes tea ","tags":["Drinks","bad tag!"]},{"content":""},{"tags":[]}]} done')).toEqual({
      items: [{ content: 'Likes tea', tags: ['drinks'] }],
      unreadable: null,
    });
    expect(parseLearned('{"memories":[]}')).toEqual({ items: [], unreadable: null });
  });

  it('an answer without a readable memories list teaches nothing and says why, in a fixed phrase without the answer', () => {
    expect(parseLearned('no json here')).toEqual({ items: [], unreadable: 'the answer holds no JSON object' });
    expect(parseLearned('{"memories": "nope"}')).toEqual({ items: [], unreadable: 'the answer has no "memories" list' });
    expect(parseLearned('{broken}')).toEqual({ items: [], unreadable: 'the answer is not valid JSON' });
  });

  it('derives item IDs from the execution and position: a replay inserts the same IDs', () => {
    const id = learnedItemId('0190c3f0-1234-7abc-8def-0123456789ab', '12', 0);
    expect(isUuid(id)).toBe(true);
    expect(learnedItemId('0190c3f0-1234-7abc-8def-0123456789ab', '12', 0)).toBe(id);
    expect(learnedItemId('0190c3f0-1234-7abc-8def-0123456789ab', '12', 1)).not.toBe(id);
  });
});
