/**
 * Whether a thrown value says the database (or another dependency) could not be reached: a
 * socket error, a PostgreSQL connection exception (SQLSTATE class 08) or a shutdown (57P01-03).
 * Such a failure is an outage to retry or answer 503, never a bug in the request (CALL-06, CALL-07).
 * Duck-typed, not `instanceof Error`: socket errors may come from another realm (VM contexts, Jest).
 */
export function isConnectionFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'].includes(code)) return true;
      if (/^08/.test(code) || /^57P0[1-3]$/.test(code)) return true;
    }
    if (
      typeof message === 'string' &&
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(message)
    ) {
      return true;
    }
  }
  return false;
}
