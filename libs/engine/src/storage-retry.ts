import { backoffMs, sleep } from './run-scope';

/**
 * Retries a storage operation while the database is unreachable (CALL-06), from 100 ms up to
 * 5 s between tries, for at most `budgetMs`. Anything that is not a connection failure (a
 * constraint, invalid stored data) is thrown at once: it is a failure, not an outage (CALL-07).
 */
export async function retryStorage<T>(operation: () => Promise<T>, signal: AbortSignal | undefined, budgetMs = 60_000): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isConnectionFailure(error) || Date.now() > deadline) throw error;
      await sleep(backoffMs(attempt), signal);
    }
  }
}

export function isConnectionFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code)) return true;
      if (/^08/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    }
    if (/Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(e.message)) {
      return true;
    }
  }
  return false;
}
