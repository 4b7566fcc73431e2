import { can, Forbidden, InvalidInput, type MemberCaller } from '@openbot/domain';
import type { RetentionDefaults } from '../../../platform/src/config/config';
import type { Sql } from '../../../platform/src/database/sql';

/** An organization's retention: its own settings (null: the platform default) and what applies. */
export interface RetentionView {
  readonly textDeltaDays: number | null;
  readonly callPayloadDays: number | null;
  readonly effective: { readonly textDeltaDays: number; readonly callPayloadDays: number };
}

export function requireRetentionManage(caller: MemberCaller): void {
  if (!can(caller, 'retention.manage')) throw new Forbidden('Retention settings need the "retention.manage" permission.');
}

export async function readRetention(db: Sql, organizationId: string, defaults: RetentionDefaults): Promise<RetentionView> {
  const row = await db.one<{ textDeltaDays: number | null; callPayloadDays: number | null }>(
    'SELECT text_delta_days AS "textDeltaDays", call_payload_days AS "callPayloadDays" FROM organization_retention WHERE organization_id = $1',
    [organizationId],
  );
  const textDeltaDays = row?.textDeltaDays ?? null;
  const callPayloadDays = row?.callPayloadDays ?? null;
  return {
    textDeltaDays,
    callPayloadDays,
    effective: { textDeltaDays: effectiveDays(textDeltaDays, defaults.textDeltaDays, defaults), callPayloadDays: effectiveDays(callPayloadDays, defaults.callPayloadDays, defaults) },
  };
}

/**
 * The days that apply: the organization's own setting, else the platform default, never above the
 * operator's ceiling (`OPENBOT_RETENTION_MAX_DAYS`, decision 074): a setting saved before the
 * ceiling was lowered applies as the ceiling.
 */
export function effectiveDays(own: number | null, platformDefault: number, defaults: RetentionDefaults): number {
  return Math.min(own ?? platformDefault, defaults.maxDays);
}

/** InvalidInput naming each setting above the operator's ceiling (decision 074). */
export function requireWithinCeiling(settings: Readonly<Record<'textDeltaDays' | 'callPayloadDays', number | null>>, defaults: RetentionDefaults): void {
  const over = Object.entries(settings).filter(([, days]) => days !== null && days > defaults.maxDays);
  if (over.length > 0) {
    throw new InvalidInput(over.map(([path]) => ({ path, message: `must be at most ${defaults.maxDays} days, the platform's retention ceiling` })));
  }
}
