import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { Database } from '../../../../platform/src/database/sql';
import { readRetention, requireRetentionManage, requireWithinCeiling, type RetentionView } from '../retention-view';

/**
 * `PUT /v1/retention` (decision 041): sets how many days after an execution ended its
 * `text.delta` events and its calls' saved results are kept; null returns a setting to the
 * platform default. A setting above the operator's ceiling (`OPENBOT_RETENTION_MAX_DAYS`) is 400
 * naming the field. The next retention run applies it, also to executions that ended earlier.
 * Audited (`retention.updated`).
 */
export class SetRetention extends Command<RetentionView> {
  constructor(
    readonly caller: MemberCaller,
    readonly textDeltaDays: number | null,
    readonly callPayloadDays: number | null,
  ) {
    super();
  }
}

@CommandHandler(SetRetention)
export class SetRetentionHandler implements ICommandHandler<SetRetention> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, textDeltaDays, callPayloadDays }: SetRetention): Promise<RetentionView> {
    requireRetentionManage(caller);
    requireWithinCeiling({ textDeltaDays, callPayloadDays }, this.config.retention);
    return this.db.transaction(async (tx) => {
      await tx.count(
        `INSERT INTO organization_retention (organization_id, text_delta_days, call_payload_days) VALUES ($1, $2, $3)
         ON CONFLICT (organization_id) DO UPDATE SET text_delta_days = EXCLUDED.text_delta_days, call_payload_days = EXCLUDED.call_payload_days, updated_at = now()`,
        [caller.organizationId, textDeltaDays, callPayloadDays],
      );
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'retention.updated',
        target: { type: 'organization', id: caller.organizationId },
        details: { textDeltaDays, callPayloadDays },
      });
      return readRetention(tx, caller.organizationId, this.config.retention);
    });
  }
}
