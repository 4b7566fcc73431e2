import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ErrorCategory, ErrorId } from '@openbot/domain';
import { Database } from '../../database/sql';
import { SealedRecords } from '../../sealing/sealed-records';
import { describeCause } from '../describe-cause';

/**
 * Saves a server fault: the full cause sealed, the ID and category in clear (ERR-01).
 * The caller chose the ID already, so the answer can name it even if this save fails.
 */
export class RecordFailure extends Command<void> {
  constructor(
    readonly errorId: ErrorId,
    readonly category: ErrorCategory,
    readonly origin: string,
    readonly cause: unknown,
  ) {
    super();
  }
}

@CommandHandler(RecordFailure)
export class RecordFailureHandler implements ICommandHandler<RecordFailure> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ errorId, category, origin, cause }: RecordFailure): Promise<void> {
    await this.db.transaction(async (tx) => {
      const causeId = await this.sealed.put('error.cause', describeCause(cause), tx);
      await tx.count('INSERT INTO error_records (id, category, origin, cause_id) VALUES ($1, $2, $3, $4)', [errorId, category, origin, causeId]);
    });
  }
}
