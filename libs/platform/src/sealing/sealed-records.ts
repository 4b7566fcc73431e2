import { Inject, Injectable } from '@nestjs/common';
import type { SealedRecordId } from '@openbot/domain';
import { newId } from '@openbot/domain';
import type { SealedColumn } from '@openbot/engine';
import { Database, type Sql } from '../database/sql';
import { Sealer } from './sealer';

/** A sealed record as stored: its ciphertext, bound to its ID and purpose. */
export interface StoredRecord {
  readonly id: string;
  readonly purpose: string;
  readonly key_id: string;
  readonly data: Buffer;
}

/** Writes and reads sealed records; callers see plain JSON values, the table sees ciphertext only. */
@Injectable()
export class SealedRecords {
  constructor(
    @Inject(Sealer) private readonly sealer: Sealer,
    @Inject(Database) private readonly db: Database,
  ) {}

  /** Seals `value` (any JSON value) and stores it, inside `tx`'s transaction when given. */
  async put(purpose: string, value: unknown, tx?: Sql): Promise<SealedRecordId> {
    const id = newId<SealedRecordId>();
    const envelope = this.sealer.seal(Buffer.from(JSON.stringify(value), 'utf8'), associatedData(id, purpose));
    await (tx ?? this.db).count('INSERT INTO sealed_records (id, purpose, key_id, data) VALUES ($1, $2, $3, $4)', [id, purpose, envelope.keyId, envelope.data]);
    return id;
  }

  /** Opens a record; throws SealedRecordUnreadable when it was tampered with or its key is unknown. */
  async get(id: SealedRecordId): Promise<{ purpose: string; value: unknown } | null> {
    const row = await this.db.one<StoredRecord>('SELECT id, purpose, key_id, data FROM sealed_records WHERE id = $1', [id]);
    return row === undefined ? null : this.open(row);
  }

  /**
   * Opens record `id` only as one of `purposes`: a record of any other purpose is answered as
   * null without being opened, and the associated data is built from the purpose the caller
   * names, so a row whose purpose was changed in place does not open either. A purpose may bind a
   * record to where its value goes (`bot-tool.headers:<origin>`, decision 068): a caller that
   * asks for another origin's purpose gets nothing, whatever it forgot to check.
   */
  async getAs(id: string, purposes: readonly string[], db?: Sql): Promise<{ purpose: string; value: unknown } | null> {
    const row = await (db ?? this.db).one<StoredRecord>('SELECT id, purpose, key_id, data FROM sealed_records WHERE id = $1', [id]);
    const purpose = row === undefined ? undefined : purposes.find((wanted) => wanted === row.purpose);
    if (row === undefined || purpose === undefined) return null;
    const plain = this.sealer.open({ keyId: row.key_id, data: row.data }, associatedData(row.id, purpose));
    return { purpose, value: JSON.parse(plain.toString('utf8')) as unknown };
  }

  /**
   * Seals `value` again in place under the purpose `to`, if record `id` still has the purpose
   * `from` (the ID stays, so every row that names it still does); answers whether it did. Two
   * callers racing: one changes it, the other is told it did not.
   */
  async repurpose(id: string, from: string, to: string, value: unknown, db?: Sql): Promise<boolean> {
    const envelope = this.sealer.seal(Buffer.from(JSON.stringify(value), 'utf8'), associatedData(id, to));
    const changed = await (db ?? this.db).count('UPDATE sealed_records SET purpose = $3, key_id = $4, data = $5 WHERE id = $1 AND purpose = $2', [id, from, to, envelope.keyId, envelope.data]);
    return changed > 0;
  }

  /**
   * Opens a record its caller read itself (joined to the row that names it, to save a round
   * trip); still only the record's own ID and purpose authenticate it.
   */
  open(row: StoredRecord): { purpose: string; value: unknown } {
    const plain = this.sealer.open({ keyId: row.key_id, data: row.data }, associatedData(row.id, row.purpose));
    return { purpose: row.purpose, value: JSON.parse(plain.toString('utf8')) as unknown };
  }
}

/** The sealed records' envelopes (Vault items, tool headers, provider keys, SSO and App secrets, error causes), as master-key rotation lists them. */
export const SEALED_RECORDS_COLUMN: SealedColumn = {
  table: 'sealed_records',
  key: [{ name: 'id', type: 'uuid' }],
  keyIdColumn: 'key_id',
  dataColumn: 'data',
  extra: ['purpose'],
  aad: (row) => associatedData(row.id!, row.purpose!),
};

/** Binds an envelope to its row and purpose: a moved envelope fails to open. */
export function associatedData(id: string, purpose: string): string {
  return `openbot.sealed.v1:${id}:${purpose}`;
}
