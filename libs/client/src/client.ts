import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { OpenbotConnectionError, unwrap } from './errors';
import type { components, paths } from './schema';

/** A typed client of the whole public API (openapi-fetch over the generated `paths`). */
export type OpenbotClient = Client<paths, 'application/json'> & {
  /** Where this client sends requests, without a trailing slash. */
  readonly baseUrl: string;
};

export interface OpenbotClientOptions {
  /** The server's origin, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** An API key (`obk_…`) or, on platform routes, the administrator token; sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** Another fetch (tests, proxies, instrumentation). Default: the global fetch. */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Headers added to every request (e.g. `user-agent`). */
  readonly headers?: Record<string, string>;
}

/**
 * `createOpenbotClient({ baseUrl, apiKey })`, then `client.GET('/v1/bots')`, `client.POST('/v1/chats', { body })`…:
 * each call answers `{ data, error, response }`; `unwrap(call)` turns an error answer into an
 * `OpenbotApiError`. A request that never reached the server throws `OpenbotConnectionError`.
 */
export function createOpenbotClient(options: OpenbotClientOptions): OpenbotClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = createClient<paths, 'application/json'>({
    baseUrl,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  client.use(authorization(options.apiKey), connectionErrors(baseUrl));
  return Object.assign(client, { baseUrl });
}

/** Adds the bearer credential unless the call set its own `authorization` header (e.g. the admin token). */
function authorization(apiKey: string | undefined): Middleware {
  return {
    onRequest({ request }) {
      if (apiKey === undefined || request.headers.has('authorization')) return undefined;
      request.headers.set('authorization', `Bearer ${apiKey}`);
      return request;
    },
  };
}

/** A failed fetch (refused, reset, DNS) becomes one typed error; an abort stays an abort. */
function connectionErrors(baseUrl: string): Middleware {
  return {
    onError({ error, request }) {
      if (request.signal.aborted || (error instanceof Error && error.name === 'AbortError')) return undefined;
      return new OpenbotConnectionError(baseUrl, { cause: error });
    },
  };
}

export type Schemas = components['schemas'];
export type MessageAdmission = Schemas['MessageAdmissionBody'];

/**
 * `POST /v1/chats/{id}/messages` with an optional `Idempotency-Key` (docs/http-api.md "Idempotency"):
 * the same key and body answer the same ids, so a retry after a lost answer never sends twice.
 */
export async function sendMessage(
  client: OpenbotClient,
  chatId: string,
  content: string,
  options: { readonly idempotencyKey?: string; readonly signal?: AbortSignal; readonly fileIds?: readonly string[] } = {},
): Promise<MessageAdmission> {
  const header: paths['/v1/chats/{id}/messages']['post']['parameters']['header'] =
    options.idempotencyKey !== undefined ? { 'Idempotency-Key': options.idempotencyKey } : {};
  return unwrap(
    client.POST('/v1/chats/{id}/messages', {
      params: { path: { id: chatId }, header },
      body: { content, ...(options.fileIds !== undefined && options.fileIds.length > 0 ? { fileIds: [...options.fileIds] } : {}) },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}
