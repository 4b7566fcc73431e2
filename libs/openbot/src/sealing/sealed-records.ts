import { Inject, Injectable } from '@nestjs/common';
import type { SealedRecordId } from '@openbot/domain';
import { DataSource, type EntityManager } from 'typeorm';
import { newId } from '@openbot/domain';
import { Sealer } from './sealer';
import { SealedRecordEntity } from './storage/sealed-record.entity';

/** Writes and reads sealed records; callers see plain JSON values, the table sees ciphertext only. */
@Injectable()
export class SealedRecords {
  constructor(
    @Inject(Sealer) private readonly sealer: Sealer,
    @Inject(DataSource) private readonly dataSource: DataSource,
  ) {}

  /** Seals `value` (any JSON value) and stores it, inside `manager`'s transaction when given. */
  async put(purpose: string, value: unknown, manager?: EntityManager): Promise<SealedRecordId> {
    const id = newId<SealedRecordId>();
    const envelope = this.sealer.seal(Buffer.from(JSON.stringify(value), 'utf8'), associatedData(id, purpose));
    await (manager ?? this.dataSource.manager).insert(SealedRecordEntity, {
      id,
      purpose,
      keyId: envelope.keyId,
      data: envelope.data,
    });
    return id;
  }

  /** Opens a record; throws SealedRecordUnreadable when it was tampered with or its key is unknown. */
  async get(id: SealedRecordId): Promise<{ purpose: string; value: unknown } | null> {
    const row = await this.dataSource.manager.findOneBy(SealedRecordEntity, { id });
    if (row === null) return null;
    const plain = this.sealer.open({ keyId: row.keyId, data: row.data }, associatedData(row.id, row.purpose));
    return { purpose: row.purpose, value: JSON.parse(plain.toString('utf8')) as unknown };
  }
}

/** Binds an envelope to its row and purpose: a moved envelope fails to open. */
export function associatedData(id: string, purpose: string): string {
  return `openbot.sealed.v1:${id}:${purpose}`;
}
