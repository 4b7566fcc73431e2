import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ErrorCategory, ErrorId } from '@openbot/domain';
import { DataSource } from 'typeorm';
import { SealedRecords } from '../../sealing/sealed-records';
import { describeCause } from '../describe-cause';
import { ErrorRecordEntity } from '../storage/error-record.entity';

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
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ errorId, category, origin, cause }: RecordFailure): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const causeId = await this.sealed.put('error.cause', describeCause(cause), tx);
      await tx.insert(ErrorRecordEntity, { id: errorId, category, origin, causeId });
    });
  }
}
