/**
 * A timer that aborts a request when it fires (first-byte and idle timeouts of provider streams).
 *
 * A stream arms and disarms it around every chunk it reads, hundreds of times per reply, so it
 * keeps one timer and moves a deadline instead of clearing and creating timers: when the timer
 * comes due before the deadline, it waits out the rest. `stop` clears it for good.
 */
export class Watchdog {
  fired = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** performance.now() when the timer comes due. */
  private timerDue = 0;
  /** performance.now() when the armed wait runs out; null while disarmed. */
  private deadline: number | null = null;

  constructor(private readonly controller: AbortController) {}

  arm(ms: number): void {
    const deadline = performance.now() + ms;
    // A timer due after the new deadline would fire late: only one due before it is kept.
    if (this.timer !== undefined && this.timerDue > deadline) this.stop();
    this.deadline = deadline;
    if (this.timer === undefined) this.schedule(ms);
  }

  /** Not waiting: a timer that comes due now does nothing. */
  disarm(): void {
    this.deadline = null;
  }

  stop(): void {
    this.deadline = null;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private due(): void {
    this.timer = undefined;
    if (this.deadline === null) return;
    const left = this.deadline - performance.now();
    if (left > 0) {
      this.schedule(left);
      return;
    }
    this.fired = true;
    this.controller.abort(new Error('model provider timeout'));
  }

  private schedule(ms: number): void {
    this.timerDue = performance.now() + ms;
    this.timer = setTimeout(() => this.due(), ms);
  }
}
