import { AnswerTooLarge, readCappedText } from './capped-body';

/** A response whose body arrives in `chunks` (no Content-Length), counting how many chunks were pulled. */
function streamed(chunks: readonly string[], headers: Record<string, string> = {}): { response: Response; pulled: () => number } {
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === chunks.length) return controller.close();
      controller.enqueue(new TextEncoder().encode(chunks[index++]));
    },
  });
  return { response: new Response(body, { headers }), pulled: () => index };
}

describe('readCappedText', () => {
  it('reads a body up to the limit as UTF-8 text, a multi-byte character split across chunks included', async () => {
    const euro = new TextEncoder().encode('€');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(euro.slice(0, 1));
        controller.enqueue(euro.slice(1));
        controller.close();
      },
    });
    expect(await readCappedText(new Response(body), 3)).toBe('€');
    expect(await readCappedText(new Response('exactly10!'), 10)).toBe('exactly10!');
    expect(await readCappedText(new Response(null), 10)).toBe('');
  });

  it('security: stops reading an endless body at the limit and rejects with AnswerTooLarge', async () => {
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const failure = await readCappedText(new Response(endless), 64 * 1024, 'the answer of tool "x"').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AnswerTooLarge);
    expect(failure).toMatchObject({ message: 'the answer of tool "x" is larger than 65536 bytes', limitBytes: 65536, safeToRetry: false });
  });

  it('security: a declared Content-Length over the limit is refused before the body is read', async () => {
    const { response, pulled } = streamed(['a', 'b'], { 'content-length': '2000' });
    await expect(readCappedText(response, 1000)).rejects.toBeInstanceOf(AnswerTooLarge);
    expect(pulled()).toBeLessThanOrEqual(1);
  });

  it('one byte over the limit is too large', async () => {
    await expect(readCappedText(streamed(['12345', '6']).response, 5)).rejects.toBeInstanceOf(AnswerTooLarge);
  });
});
