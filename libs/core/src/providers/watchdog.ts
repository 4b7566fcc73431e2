/** A timer that aborts a request when it fires (first-byte and idle timeouts of provider streams). */
export class Watchdog {
  fired = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly controller: AbortController) {}

  arm(ms: number): void {
    this.disarm();
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new Error('model provider timeout'));
    }, ms);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
