/** Default cap on error bodies and small documents read from outside servers (64 KiB). */
export const DEFAULT_ERROR_BODY_LIMIT = 64 * 1024;

/**
 * An outside server answered more bytes than the reader accepts. Reading stops at the limit, so
 * an endless or huge answer from an organization-supplied server costs at most `limitBytes` of
 * memory on this node. Repeating the request cannot help.
 */
export class AnswerTooLarge extends Error {
  override readonly name = 'AnswerTooLarge';
  readonly safeToRetry = false;
  constructor(
    /** What was being read, e.g. `the answer of tool "lookup"`. */
    readonly what: string,
    readonly limitBytes: number,
  ) {
    super(`${what} is larger than ${limitBytes} bytes`);
  }
}

/**
 * The body of `response` as UTF-8 text (like `response.text()`), reading at most `limitBytes`:
 * a larger body, announced by `Content-Length` or counted while reading, is cancelled and
 * rejected with `AnswerTooLarge`.
 */
export async function readCappedText(response: Response, limitBytes: number, what = 'the answer'): Promise<string> {
  return new TextDecoder().decode(await readCappedBytes(response, limitBytes, what));
}

/** The body of `response` as bytes, reading at most `limitBytes` (see `readCappedText`). */
export async function readCappedBytes(response: Response, limitBytes: number, what = 'the answer'): Promise<Uint8Array> {
  const body = response.body;
  if (body === null) return new Uint8Array(0);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    await body.cancel().catch(() => undefined);
    throw new AnswerTooLarge(what, limitBytes);
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLarge(what, limitBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
