import { InvalidInput } from '@openbot/domain';
import { Cron } from 'croner';

/**
 * What a schedule does with fire times it finds late, i.e. older than the misfire threshold (the
 * node was down, or busy); fire times within the threshold always run:
 * - `skip`: late fire times are dropped.
 * - `latest`: when no fire time is within the threshold, the most recent late one runs, once.
 * - `catch-up`: every fire time within the window runs, oldest first; older ones are dropped.
 */
export type MissedRuns = { readonly policy: 'skip' } | { readonly policy: 'latest' } | { readonly policy: 'catch-up'; readonly windowSeconds: number };

/** Fire times run by one decision at most: a catch-up after a long outage continues at the next tick. */
export const MAX_FIRES_PER_TICK = 100;

/** A parsed expression: 5 fields (minutes) or 6 (seconds first), read in an IANA time zone. */
export function parseCron(cron: string, timeZone: string): Cron {
  try {
    new Intl.DateTimeFormat('en', { timeZone }).format(0);
  } catch {
    throw new InvalidInput([{ path: 'timeZone', message: `"${timeZone}" is not an IANA time zone.` }]);
  }
  try {
    return new Cron(cron, { timezone: timeZone, mode: '5-or-6-parts', paused: true });
  } catch (error) {
    throw new InvalidInput([{ path: 'cron', message: `"${cron}" is not a cron expression: ${(error as Error).message}` }]);
  }
}

/** The first fire time strictly after `after`, or null when the expression has no more. */
export function nextFireAfter(cron: Cron, after: number): Date | null {
  return cron.nextRun(new Date(after));
}

/**
 * Which due fire times run now. `due` is the first fire time not yet handled (≤ now). Answers
 * the fire times to run, oldest first, and the next fire time to wait for.
 */
export function dueFires(cron: Cron, due: Date, now: number, missed: MissedRuns, misfireMs: number): { fire: Date[]; next: Date | null } {
  const reach = missed.policy === 'catch-up' ? Math.max(misfireMs, missed.windowSeconds * 1000) : misfireMs;
  const found = firesBetween(cron, due, now - reach, now);
  if (found.fire.length > 0 || missed.policy !== 'latest') return found;
  // Nothing within the threshold: the latest fire time at or before now (the due one or a later one).
  const previous = cron.previousRuns(1, new Date(now + 1))[0];
  const latest = previous !== undefined && previous.getTime() > due.getTime() && previous.getTime() <= now ? previous : due;
  return { fire: [latest], next: found.next };
}

/** The fire times in [max(due, from), now], capped per tick, and the next one after them. */
function firesBetween(cron: Cron, due: Date, from: number, now: number): { fire: Date[]; next: Date | null } {
  const start = Math.max(due.getTime(), from);
  const fire: Date[] = [];
  let at: Date | null = start === due.getTime() ? due : nextFireAfter(cron, start - 1);
  while (at !== null && at.getTime() <= now && fire.length < MAX_FIRES_PER_TICK) {
    fire.push(at);
    at = nextFireAfter(cron, at.getTime());
  }
  return { fire, next: fire.length === MAX_FIRES_PER_TICK ? at : nextFireAfter(cron, now) };
}
