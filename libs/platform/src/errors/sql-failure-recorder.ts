import { Inject, Injectable } from '@nestjs/common';
import { newId } from '@openbot/domain';
import type { FailureRecorder, Queryable } from '@openbot/engine';
import { describeCause } from './describe-cause';
import { associatedData } from '../sealing/sealed-records';
import { Sealer } from '../sealing/sealer';

/** The engine's failure port: a sealed cause and an error record inside the engine's own transaction (ERR-01). */
@Injectable()
export class SqlFailureRecorder implements FailureRecorder {
  constructor(@Inject(Sealer) private readonly sealer: Sealer) {}

  async record(tx: Queryable, failure: Parameters<FailureRecorder['record']>[1]): Promise<void> {
    const causeId = newId();
    const purpose = 'error.cause';
    const envelope = this.sealer.seal(Buffer.from(JSON.stringify(describeCause(failure.cause)), 'utf8'), associatedData(causeId, purpose));
    await tx.query({
      name: 'openbot.insert_sealed_record',
      text: 'INSERT INTO sealed_records (id, purpose, key_id, data) VALUES ($1, $2, $3, $4)',
      values: [causeId, purpose, envelope.keyId, envelope.data],
    });
    await tx.query({
      name: 'openbot.insert_error_record',
      text: 'INSERT INTO error_records (id, category, origin, cause_id, execution_id, detail) VALUES ($1, $2, $3, $4, $5, $6)',
      values: [failure.errorId, failure.category, failure.origin, causeId, failure.executionId ?? null, failure.detail === undefined ? null : JSON.stringify(failure.detail)],
    });
  }
}
