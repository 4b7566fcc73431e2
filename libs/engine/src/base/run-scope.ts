import { ResourceStack } from './resource-stack';

export { backoffMs } from './backoff';

/**
 * The scope of one phase run (EXE-08, EXE-11, RES-01): an AbortController that is the phase
 * gate, and a ResourceStack of the resources the phase opened. Closing the gate aborts
 * local work first; then resources close; a request arriving after the gate closed starts nothing.
 */
export class RunScope {
  private readonly controller = new AbortController();
  readonly resources = new ResourceStack();
  private closed = false;
  /** The first close failure, kept with its full cause (RES-01). */
  closeFailure: unknown = null;
  /** Every release that failed after its retries (ERR-04); the first is `closeFailure`. */
  releaseFailures: unknown[] = [];

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get gateClosed(): boolean {
    return this.controller.signal.aborted;
  }

  /** Closes the phase gate: running work sees its signal aborted with `reason`. */
  closeGate(reason: GateReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Throws when the gate is closed: new sends must not start (EXE-11, RES-01). */
  assertOpen(): void {
    if (this.controller.signal.aborted) throw new GateClosed(this.controller.signal.reason as GateReason);
  }

  /** Closes every resource once; a failure is kept, not thrown, and blocks new sends. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.releaseFailures = await this.resources.release();
    if (this.releaseFailures.length > 0) {
      this.closeFailure = this.releaseFailures[0];
      this.closeGate('close-failed');
    }
  }
}

export type GateReason = 'cancel' | 'pause' | 'lease-lost' | 'shutdown' | 'close-failed';

export class GateClosed extends Error {
  constructor(readonly reason: GateReason) {
    super(`phase gate closed (${reason})`);
  }
}

/** Sleeps `ms` unless `signal` aborts first (backoff that cancel can interrupt). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new GateClosed(signal.reason as GateReason));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new GateClosed(signal!.reason as GateReason));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
