/**
 * The error shapes of the public contract (docs/http-api.md "Errors") as one exception type, so callers
 * switch on `type` (a stable name) and show `errorId` for server faults.
 */

/** One offending input field of a 400 `InvalidInput`. */
export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

/** The body of a server fault (5xx), also sent as one SSE `error` event after a stream started. */
export interface RequestFailed {
  readonly type: 'RequestFailed';
  readonly category: 'internal' | 'unavailable' | 'timeout';
  readonly errorId: string;
}

export interface OpenbotApiErrorFields {
  readonly status: number;
  readonly type: string;
  readonly message: string;
  readonly errorId?: string;
  readonly category?: string;
  readonly issues?: readonly InputIssue[];
  readonly retryAfterSeconds?: number;
}

/** An error answer of the API: a declared error (`{ type, message }`) or a server fault (`RequestFailed`). */
export class OpenbotApiError extends Error implements OpenbotApiErrorFields {
  readonly status: number;
  readonly type: string;
  readonly errorId?: string;
  readonly category?: string;
  readonly issues?: readonly InputIssue[];
  readonly retryAfterSeconds?: number;

  constructor(fields: OpenbotApiErrorFields) {
    super(fields.message);
    this.name = 'OpenbotApiError';
    this.status = fields.status;
    this.type = fields.type;
    if (fields.errorId !== undefined) this.errorId = fields.errorId;
    if (fields.category !== undefined) this.category = fields.category;
    if (fields.issues !== undefined) this.issues = fields.issues;
    if (fields.retryAfterSeconds !== undefined) this.retryAfterSeconds = fields.retryAfterSeconds;
  }

  /** A server fault or a dependency outage (5xx): worth retrying, never the caller's mistake. */
  get isServerFault(): boolean {
    return this.status >= 500;
  }
}

/** The server could not be reached or the connection broke before an answer (DNS, refused, reset). */
export class OpenbotConnectionError extends Error {
  constructor(
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(`cannot reach ${url}: ${describeCause(options.cause)}`, options);
    this.name = 'OpenbotConnectionError';
  }
}

/**
 * Turns an error answer into an `OpenbotApiError`. `body` is what openapi-fetch parsed (JSON when it
 * could, else the raw text); anything not in the contract's shape (a proxy's HTML page) keeps its
 * status with the type `HttpError`.
 */
export function toApiError(response: Response, body: unknown): OpenbotApiError {
  const headerErrorId = response.headers.get('openbot-error-id') ?? undefined;
  const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const type = typeof fields.type === 'string' ? fields.type : 'HttpError';
  const errorId = typeof fields.errorId === 'string' ? fields.errorId : headerErrorId;
  const category = typeof fields.category === 'string' ? fields.category : undefined;
  const message =
    typeof fields.message === 'string'
      ? fields.message
      : type === 'RequestFailed'
        ? `the server failed (${category ?? 'internal'})`
        : `HTTP ${response.status}${typeof body === 'string' && body.trim() !== '' ? `: ${body.trim().slice(0, 200)}` : ''}`;
  return new OpenbotApiError({
    status: response.status,
    type,
    message,
    ...(errorId !== undefined ? { errorId } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(Array.isArray(fields.issues) ? { issues: fields.issues.filter(isIssue) } : {}),
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
  });
}

/** The error an SSE `error` event carries, as the exception a failed request would have thrown. */
export function faultError(fault: RequestFailed): OpenbotApiError {
  return new OpenbotApiError({
    status: fault.category === 'unavailable' ? 503 : 500,
    type: 'RequestFailed',
    message: `the server failed while streaming (${fault.category})`,
    errorId: fault.errorId,
    category: fault.category,
  });
}

/** What every openapi-fetch call answers. */
export interface FetchResult<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/**
 * The data of a successful answer, or the `OpenbotApiError` of an error answer:
 * `const bot = await unwrap(client.GET('/v1/bots/{id}', { params: { path: { id } } }))`.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>> | FetchResult<T>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw toApiError(response, error);
  return data as T;
}

function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

function isIssue(value: unknown): value is InputIssue {
  const issue = value as Partial<InputIssue> | null;
  return typeof issue === 'object' && issue !== null && typeof issue.path === 'string' && typeof issue.message === 'string';
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    const code = typeof inner === 'object' && inner !== null ? (inner as { code?: unknown }).code : undefined;
    return typeof code === 'string' ? `${cause.message} (${code})` : cause.message;
  }
  return String(cause);
}
