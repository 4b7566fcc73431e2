import { OpenbotApiError, OpenbotConnectionError } from '@openbot/client';

/** The CLI's exit codes: scripts branch on them. */
export const EXIT = {
  ok: 0,
  /** Bad arguments, missing configuration. */
  usage: 1,
  /** The API refused the request (4xx): fix the request, retrying will not help. */
  refused: 2,
  /** The server failed (5xx) or could not be reached. */
  failed: 3,
  /** `chat` / `executions watch`: the execution ended in another state than `completed`. */
  notCompleted: 4,
} as const;

/** A mistake in how the CLI was called (or configured): exit 1. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** What a model provider answered when it refused the call an execution failed of, scrubbed by the server (decision 082). */
export interface ProviderAnswer {
  readonly status?: unknown;
  readonly code?: unknown;
  readonly message?: unknown;
}

/** `404 model_not_found: The model … does not exist`: the parts the server sent, in one line. */
export function formatProviderAnswer(detail: ProviderAnswer): string {
  const head = [detail.status, detail.code].filter((part) => typeof part === 'number' || typeof part === 'string').join(' ');
  const message = typeof detail.message === 'string' ? detail.message : '';
  return head !== '' && message !== '' ? `${head}: ${message}` : head + message;
}

/** An execution that ended `failed`, `cancelled` or `interrupted`: exit 4. */
export class ExecutionNotCompleted extends Error {
  override readonly name = 'ExecutionNotCompleted';
  constructor(
    readonly state: string,
    readonly errorId?: string,
    readonly category?: string,
    /** What the model provider answered, when it refused the call the execution failed of. */
    readonly detail?: ProviderAnswer,
  ) {
    super(`the execution ended ${state}`);
  }
}

/** The exit code and the stderr lines of any error a command threw. */
export function describeFailure(error: unknown): { code: number; lines: string[] } {
  if (error instanceof OpenbotApiError) {
    const lines = [`Error: ${error.type}: ${error.message}`];
    for (const issue of error.issues ?? []) lines.push(`  ${issue.path}: ${issue.message}`);
    if (error.errorId !== undefined) lines.push(`errorId: ${error.errorId}`);
    return { code: error.status >= 500 ? EXIT.failed : EXIT.refused, lines };
  }
  if (error instanceof OpenbotConnectionError) return { code: EXIT.failed, lines: [`Error: Unreachable: ${error.message}`] };
  if (error instanceof ExecutionNotCompleted) {
    const lines = [`Error: ExecutionNotCompleted: ${error.message}${error.category !== undefined ? ` (${error.category})` : ''}`];
    if (error.detail !== undefined) lines.push(`provider: ${formatProviderAnswer(error.detail)}`);
    if (error.errorId !== undefined) lines.push(`errorId: ${error.errorId}`);
    return { code: EXIT.notCompleted, lines };
  }
  if (error instanceof UsageError) return { code: EXIT.usage, lines: [`Error: Usage: ${error.message}`] };
  const message = error instanceof Error ? error.message : String(error);
  return { code: EXIT.failed, lines: [`Error: ${error instanceof Error ? error.name : 'Error'}: ${message}`] };
}
