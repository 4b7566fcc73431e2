import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, isUuid, newId, NotFound, type PlatformAdmin } from '@openbot/domain';
import { inputHash } from '@openbot/engine';
import { recordAudit } from '../../audit/record-audit';
import { Database } from '../../database/sql';
import { CREDIT_ENTRY_COLUMNS, type CreditEntryView } from '../billing-views';

/**
 * The platform administrator grants (positive) or adjusts (negative) an organization's credits
 * (PLAT-08): one ledger entry, append-only. The first entry opens the credit account, from
 * which on credits limit the organization. With an `Idempotency-Key` the same key and body
 * answer the same entry, also when two requests race (the unique key decides); the same key
 * with another body is 409 CommandKeyConflict, as for messages. The entry is audited in the
 * organization's log (`credits.granted` or `credits.adjusted`, the administrator as the actor),
 * once: a replayed key answers the earlier entry and records nothing again.
 */
export class GrantCredits extends Command<CreditEntryView> {
  constructor(
    readonly admin: PlatformAdmin,
    readonly organizationId: string,
    readonly amountMicros: number,
    readonly reason: string,
    readonly commandKey: string | null,
  ) {
    super();
  }
}

@CommandHandler(GrantCredits)
export class GrantCreditsHandler implements ICommandHandler<GrantCredits> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ admin, organizationId, amountMicros, reason, commandKey }: GrantCredits): Promise<CreditEntryView> {
    if (!isUuid(organizationId)) throw new NotFound('Organization');
    const hash = inputHash({ amountMicros, reason });
    return this.db.transaction(async (tx) => {
      const org = await tx.one('SELECT 1 FROM organizations WHERE id = $1', [organizationId]);
      if (org === undefined) throw new NotFound('Organization');
      // The account row first: it serialises grants of one organization with each other and with reservations.
      await tx.query('INSERT INTO credit_accounts (organization_id) VALUES ($1) ON CONFLICT DO NOTHING', [organizationId]);
      await tx.query('SELECT 1 FROM credit_accounts WHERE organization_id = $1 FOR UPDATE', [organizationId]);
      if (commandKey !== null) {
        const earlier = await tx.one<CreditEntryView & { inputHash: Buffer }>(
          `SELECT ${CREDIT_ENTRY_COLUMNS}, input_hash AS "inputHash" FROM credit_entries WHERE organization_id = $1 AND command_key = $2`,
          [organizationId, commandKey],
        );
        if (earlier !== undefined) {
          if (!earlier.inputHash.equals(hash)) throw new Conflict('CommandKeyConflict', 'This Idempotency-Key was already used with another grant.');
          const { inputHash: _hash, ...entry } = earlier;
          return entry;
        }
      }
      const entry = (await tx.one<CreditEntryView>(
        `INSERT INTO credit_entries (id, organization_id, amount_micros, kind, reason, command_key, input_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${CREDIT_ENTRY_COLUMNS}`,
        [newId(), organizationId, amountMicros, amountMicros > 0 ? 'grant' : 'adjustment', reason, commandKey, commandKey === null ? null : hash],
      ))!;
      await recordAudit(tx, {
        organizationId,
        actor: admin,
        action: entry.kind === 'grant' ? 'credits.granted' : 'credits.adjusted',
        target: { type: 'credit-entry', id: entry.id },
        details: { amountMicros: entry.amountMicros, kind: entry.kind, reason: entry.reason },
      });
      return entry;
    });
  }
}
