import { backoffMs } from './backoff';

type Disposer = () => Promise<void> | void;

/** How many times one resource's release is tried before its failure is kept (100 ms → 5 s apart). */
export const RELEASE_ATTEMPTS = 6;

/**
 * The resources a phase opened, released in reverse order when the phase closes (RES-01).
 * A release that fails is retried with backoff from 100 ms to 5 s (ERR-04); a release that
 * still fails is kept with its full cause, and the other resources are still released.
 */
export class ResourceStack {
  private readonly disposers: Disposer[] = [];
  private closed = false;

  /** Registers a release function; it runs when the phase closes. */
  defer(release: Disposer): void {
    if (this.closed) throw new Error('the phase has closed: no resource can be added');
    this.disposers.push(release);
  }

  /** Registers a value with its release function and returns the value. */
  adopt<T>(value: T, release: (value: T) => Promise<void> | void): T {
    this.defer(() => release(value));
    return value;
  }

  /** Registers an (async) disposable and returns it. */
  use<T extends AsyncDisposable | Disposable | null | undefined>(value: T): T {
    if (value !== null && value !== undefined) {
      const v = value as Partial<AsyncDisposable & Disposable>;
      const dispose = v[Symbol.asyncDispose] ?? v[Symbol.dispose];
      if (typeof dispose !== 'function') throw new TypeError('not a disposable');
      this.defer(() => dispose.call(value));
    }
    return value;
  }

  /** Releases everything, newest first; answers the causes of releases that failed for good. */
  async release(): Promise<unknown[]> {
    if (this.closed) return [];
    this.closed = true;
    const failures: unknown[] = [];
    for (const dispose of this.disposers.splice(0).reverse()) {
      for (let attempt = 1; ; attempt++) {
        try {
          await dispose();
          break;
        } catch (error) {
          if (attempt >= RELEASE_ATTEMPTS) {
            failures.push(error);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
        }
      }
    }
    return failures;
  }
}
