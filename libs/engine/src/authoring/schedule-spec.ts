import type { MissedRuns } from '../base/schedule-times';
import type { NewExecutionCommand } from './engine-api';
import type { Json, ResourceRef } from './workflow';

/** A recurring schedule: at each fire time of `cron` (read in `timeZone`) it submits `workflow`. */
export interface ScheduleSpec {
  /** The caller's stable name, e.g. `reminder:<id>`: upserting it again updates the schedule. */
  readonly name: string;
  /** Five fields (minute first) or six (second first), croner syntax. */
  readonly cron: string;
  /** An IANA time zone, e.g. `Europe/Berlin` (default UTC): fire times follow its DST changes. */
  readonly timeZone?: string;
  readonly workflow: string;
  readonly input: Json;
  readonly scope: NewExecutionCommand['scope'];
  readonly resource?: ResourceRef;
  /** Who the submitted executions act as (IDN-01); stored sealed. */
  readonly identity?: Json;
  /** What late fire times do (default `skip`). */
  readonly missed?: MissedRuns;
}

export interface ScheduleView {
  readonly id: string;
  readonly name: string;
  readonly cron: string;
  readonly timeZone: string;
  readonly workflow: string;
  readonly missed: MissedRuns;
  /** The next fire time not yet handled; null when the expression has no more runs. */
  readonly nextFireAt: Date | null;
}
