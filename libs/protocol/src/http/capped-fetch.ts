/** Statuses whose Response may not carry a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** A `fetch` as the MCP transports call it. */
export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * An answer of an MCP server was larger than the cap. Reading stops there, so a huge or endless
 * answer (an SSE stream that never ends) costs this node at most `limitBytes`.
 */
export class McpAnswerTooLarge extends Error {
  override readonly name = 'McpAnswerTooLarge';
  readonly safeToRetry = false;
  constructor(readonly limitBytes: number) {
    super(`the MCP server answered more than ${limitBytes} bytes`);
  }
}

/**
 * Wraps `fetch` so that every response body is cut at `limitBytes`: a larger `Content-Length`
 * fails before reading, and a body that grows past the cap while streaming errors its stream
 * (the transport then reports the request as failed). Request URLs are handed on as they are: the
 * given `fetch` (OpenBot's pinned egress client) decides which hosts may be reached.
 */
export function cappedFetch(fetch: Fetch, limitBytes: number): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' || input instanceof URL ? input : (input as { url: string }).url;
    const response = await fetch(url, init);
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > limitBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new McpAnswerTooLarge(limitBytes);
    }
    if (response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
    let total = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          total += chunk.byteLength;
          if (total > limitBytes) controller.error(new McpAnswerTooLarge(limitBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
