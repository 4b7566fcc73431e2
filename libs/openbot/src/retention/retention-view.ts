import { can, Forbidden, type MemberCaller } from '@openbot/domain';
import type { RetentionDefaults } from '../config/config';
import type { Sql } from '../database/sql';

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
    effective: { textDeltaDays: textDeltaDays ?? defaults.textDeltaDays, callPayloadDays: callPayloadDays ?? defaults.callPayloadDays },
  };
}
