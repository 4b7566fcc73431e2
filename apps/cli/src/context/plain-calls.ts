import type { FetchResult, OpenbotClient } from '@openbot/client';

/** What a call by path may carry (openapi-fetch's options, untyped by route). */
export interface PlainInit {
  readonly params?: { readonly path?: Record<string, string>; readonly query?: Record<string, unknown> };
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly bodySerializer?: (body: FormData) => FormData;
  readonly parseAs?: 'json' | 'stream';
}

/**
 * The client's calls by a plain path, for routes whose bodies a command types itself (files,
 * memories, Apps, billing): openapi-fetch calls them the same way, `T` is what the command expects.
 */
export interface PlainCalls {
  GET<T = unknown>(path: string, init?: PlainInit): Promise<FetchResult<T>>;
  POST<T = unknown>(path: string, init?: PlainInit): Promise<FetchResult<T>>;
  PUT<T = unknown>(path: string, init?: PlainInit): Promise<FetchResult<T>>;
  PATCH<T = unknown>(path: string, init?: PlainInit): Promise<FetchResult<T>>;
  DELETE<T = unknown>(path: string, init?: PlainInit): Promise<FetchResult<T>>;
}

/** The one place the typed client is seen untyped by route: its methods take any path at run time. */
export const plain = (client: OpenbotClient): PlainCalls => client as unknown as PlainCalls;
