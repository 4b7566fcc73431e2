/**
 * Named fault points for crash tests (docs/architecture.md "Crash tests"): a test can
 * pause, throw or kill the process at the intent, sending and result commits of a call and at
 * checkpoint commits. In production no fault is ever armed: `hit` is one Map lookup on an empty map.
 */
export type FaultPoint = EngineFaultPoint | FeatureFaultPoint;

/** The engine's own fault points. */
export type EngineFaultPoint =
  | 'call.intent.committed'
  | 'call.sending.committed'
  | 'call.result.before-commit'
  | 'call.result.committed'
  | 'call.failed.committed'
  | 'schedule.fired.committed'
  | 'checkpoint.before-commit'
  | 'checkpoint.committed'
  | 'phase.started';

/**
 * A point a feature names in its own code (e.g. `file.object.written` of the files feature): the
 * engine knows none of them (EXE-05), it only arms and hits them by name.
 */
export type FeatureFaultPoint = `${string}.${string}`;

export type FaultAction =
  | { readonly kind: 'throw'; readonly error?: Error }
  | { readonly kind: 'kill' }
  | { readonly kind: 'pause'; readonly until: Promise<void> }
  | { readonly kind: 'call'; readonly run: (context: FaultContext) => Promise<void> | void };

export interface FaultContext {
  readonly executionId: string;
  readonly step?: number;
  readonly callKey?: string;
}

export class FaultPoints {
  private readonly armed = new Map<FaultPoint, { action: FaultAction; when?: (c: FaultContext) => boolean; times: number }>();

  /** Arms a fault; `times` hits then it disarms itself (default once). */
  arm(point: FaultPoint, action: FaultAction, options: { when?: (c: FaultContext) => boolean; times?: number } = {}): void {
    this.armed.set(point, { action, when: options.when, times: options.times ?? 1 });
  }

  disarm(point?: FaultPoint): void {
    if (point) this.armed.delete(point);
    else this.armed.clear();
  }

  async hit(point: FaultPoint, context: FaultContext): Promise<void> {
    if (this.armed.size === 0) return;
    const fault = this.armed.get(point);
    if (!fault || (fault.when && !fault.when(context))) return;
    fault.times -= 1;
    if (fault.times <= 0) this.armed.delete(point);
    switch (fault.action.kind) {
      case 'throw':
        throw fault.action.error ?? new Error(`fault injected at ${point}`);
      case 'kill':
        process.kill(process.pid, 'SIGKILL');
        await new Promise(() => undefined);
        return;
      case 'pause':
        await fault.action.until;
        return;
      case 'call':
        await fault.action.run(context);
        return;
      default: {
        const unreachable: never = fault.action;
        return unreachable;
      }
    }
  }
}

/**
 * Arms faults from `OPENBOT_FAULTS` in a spawned test process, e.g.
 * `call.sending.committed=kill` or `checkpoint.committed=kill@step:3`. Refused in production.
 */
export function faultPointsFromEnv(env: Readonly<Record<string, string | undefined>>, production: boolean): FaultPoints {
  const faults = new FaultPoints();
  const spec = env.OPENBOT_FAULTS;
  if (spec === undefined || spec === '') return faults;
  if (production) throw new Error('OPENBOT_FAULTS is a test-only setting and is refused with NODE_ENV=production');
  for (const entry of spec.split(',')) {
    const match = /^([a-z.-]+)=(kill|throw)(?:@step:(\d+))?$/.exec(entry.trim());
    if (!match) throw new Error(`OPENBOT_FAULTS: cannot read "${entry}"`);
    const step = match[3] === undefined ? undefined : Number(match[3]);
    faults.arm(match[1] as FaultPoint, { kind: match[2] as 'kill' | 'throw' }, step === undefined ? {} : { when: (c) => c.step === step });
  }
  return faults;
}
