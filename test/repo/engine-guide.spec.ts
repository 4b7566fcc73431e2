import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** docs/engine.md quotes its example; the spec next to the example runs it, so the guide cannot drift from working code. */
describe('the engine guide', () => {
  it('quotes its example workflow exactly as the file that the tests run has it', async () => {
    const guide = await readFile(join(root, 'docs', 'engine.md'), 'utf8');
    const quotes = [...guide.matchAll(/<!-- quoted from (\S+) -->\n```ts\n([\s\S]*?)\n```/g)];
    expect(quotes.length).toBeGreaterThanOrEqual(2);
    for (const [, path, code] of quotes) {
      const source = await readFile(join(root, path!), 'utf8');
      expect({ path, quoted: source.includes(code!) }).toEqual({ path, quoted: true });
    }
  });
});
