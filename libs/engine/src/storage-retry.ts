import { isConnectionFailure } from '@openbot/domain';
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

export { isConnectionFailure };
