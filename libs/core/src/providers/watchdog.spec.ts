import { Watchdog } from './watchdog';

describe('the provider stream watchdog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const watch = () => {
    const controller = new AbortController();
    return { controller, watchdog: new Watchdog(controller) };
  };

  it('aborts once an armed wait runs out', () => {
    const { controller, watchdog } = watch();
    watchdog.arm(100);
    jest.advanceTimersByTime(99);
    expect(controller.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(watchdog.fired).toBe(true);
    expect(controller.signal.aborted).toBe(true);
  });

  it('counts each wait from its own arming, with one timer for all of them', () => {
    const { controller, watchdog } = watch();
    for (let chunk = 0; chunk < 10; chunk++) {
      watchdog.arm(100);
      jest.advanceTimersByTime(80);
      watchdog.disarm();
    }
    expect(controller.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(1);
    watchdog.arm(100);
    jest.advanceTimersByTime(99);
    expect(controller.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(controller.signal.aborted).toBe(true);
  });

  it('does nothing when its timer comes due while disarmed', () => {
    const { controller, watchdog } = watch();
    watchdog.arm(100);
    watchdog.disarm();
    jest.advanceTimersByTime(1_000);
    expect(controller.signal.aborted).toBe(false);
    watchdog.arm(50);
    jest.advanceTimersByTime(50);
    expect(controller.signal.aborted).toBe(true);
  });

  it('fires a shorter wait on time after a longer one (first byte, then idle)', () => {
    const { controller, watchdog } = watch();
    watchdog.arm(60_000);
    watchdog.disarm();
    watchdog.arm(100);
    jest.advanceTimersByTime(100);
    expect(controller.signal.aborted).toBe(true);
  });

  it('leaves no timer behind once stopped', () => {
    const { controller, watchdog } = watch();
    watchdog.arm(100);
    watchdog.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1_000);
    expect(controller.signal.aborted).toBe(false);
  });
});
