import { isConnectionFailure } from '@openbot/domain';
import { backoffMs, sleep } from './run-scope';

/**
 * Retries a storage operation while the database is unreachable (CALL-06), from 100 ms up to
 * 5 s between tries, for at most `budgetMs`. A transaction PostgreSQL aborted to break a deadlock
 * or a serialization conflict is retried too: it rolled back whole, so trying it again is safe.
 * Anything else (a constraint, invalid stored data) is thrown at once: it is a failure, not an
 * outage (CALL-07).
 */
export async function retryStorage<T>(operation: () => Promise<T>, signal: AbortSignal | undefined, budgetMs = 60_000): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!(isConnectionFailure(error) || isLockConflict(error)) || Date.now() > deadline) throw error;
      await sleep(backoffMs(attempt), signal);
    }
  }
}

/** A deadlock (40P01) or serialization failure (40001): PostgreSQL rolled the transaction back. */
export function isLockConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

export { isConnectionFailure };
