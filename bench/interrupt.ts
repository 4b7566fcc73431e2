/**
 * What a benchmark killed with SIGINT or SIGTERM must still stop: `finally` blocks do not run
 * then, and its embedded PostgreSQL and server children would outlive it (a SIGTERM to the
 * benchmark alone reaches neither). Each start registers its stop here; on the signal every
 * registered stop runs, the last registered first, then the process exits with the signal's usual code. The stops are
 * idempotent, so one that already ran the usual way does nothing again.
 */
const stops = new Set<() => Promise<unknown>>();

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    // Connections the benchmark still holds fail as their database stops: nothing to report then.
    process.on('uncaughtException', () => undefined);
    void (async () => {
      // The last started first: the server before its database.
      for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
      process.exit(code);
    })();
  });
}

/** Runs `stop` (idempotent) if the benchmark is interrupted. */
export function stopOnInterrupt(stop: () => Promise<unknown>): void {
  stops.add(stop);
}
