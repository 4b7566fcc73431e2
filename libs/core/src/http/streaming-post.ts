import { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';

/** What one POST sends. */
export interface PostInit {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly signal: AbortSignal;
}

/** The answer of a streaming POST: its status and headers, and its body as a Node stream. */
export interface PostAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Readable;
}

/**
 * The one HTTP call of the provider adapters. Unlike `fetch`, the body comes as a Node stream:
 * each of a model stream's hundreds of small chunks costs one read, not a trip through fetch's
 * web-stream pipeline (docs/decisions/047-model-streams-without-fetch-and-fewer-round-trips.md). Redirects are never
 * followed; aborting `signal` ends the request and its body.
 */
export type StreamingPost = (url: string, init: PostInit) => Promise<PostAnswer>;

/**
 * A StreamingPost on undici's `request`, through `dispatcher` (default: undici's global one). The
 * body buffers at most one chunk: a reader that pauses it (a paced read, decision 063) stops the
 * HTTP parser, and with it the socket's reads, at once.
 */
export function undiciPost(dispatcher?: Dispatcher): StreamingPost {
  return async (url, init) => {
    const answer = await request(url, {
      method: 'POST',
      headers: init.headers,
      body: init.body,
      signal: init.signal,
      highWaterMark: 1,
      ...(dispatcher === undefined ? {} : { dispatcher }),
    });
    return { status: answer.statusCode, headers: answer.headers, body: answer.body };
  };
}

/** Statuses whose `Response` may carry no body. */
const NULL_BODY = new Set([204, 205, 304]);

/** A non-2xx answer as a `Response`, for the adapters' error mapping (a capped body read, `Retry-After`). */
export function answerAsResponse(answer: PostAnswer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  if (NULL_BODY.has(answer.status)) {
    answer.body.destroy();
    return new Response(null, { status: answer.status, headers });
  }
  return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, { status: answer.status, headers });
}
