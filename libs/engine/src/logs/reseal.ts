import type { Pool } from 'pg';
import type { EngineSealer } from '../base/ports';
import { aad } from '../base/sealed-json';
import { withTransaction } from '../base/tx';

/**
 * One sealed column: a key-ID column and an envelope column of a table, with what its associated
 * data is made of. Master-key rotation (`openbot rekey`, decision 071) reseals every column of
 * this kind; the full list is `SEALED_COLUMNS` in libs/platform (rekey) (the engine declares its own here).
 */
export interface SealedColumn {
  readonly table: string;
  /** The primary key, in keyset order, with each column's SQL type. */
  readonly key: ReadonlyArray<{ readonly name: string; readonly type: 'uuid' | 'integer' }>;
  readonly keyIdColumn: string;
  readonly dataColumn: string;
  /** Further columns the associated data names. */
  readonly extra: readonly string[];
  /** The associated data of a row, from its key and extra columns (as text). */
  aad(row: Readonly<Record<string, string>>): string;
}

/** The engine's sealed columns: execution state and identity, events, call results, signals, schedules. */
export const ENGINE_SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'executions', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'key_id', dataColumn: 'data', extra: [], aad: (r) => aad.executionData(r.id!) },
  { table: 'executions', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'identity_key_id', dataColumn: 'identity', extra: [], aad: (r) => aad.identity(r.id!) },
  {
    table: 'execution_events',
    key: [
      { name: 'execution_id', type: 'uuid' },
      { name: 'seq', type: 'integer' },
    ],
    keyIdColumn: 'key_id',
    dataColumn: 'data',
    extra: ['type'],
    aad: (r) => aad.event(r.execution_id!, r.type!),
  },
  { table: 'execution_calls', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'key_id', dataColumn: 'result', extra: [], aad: (r) => aad.callResult(r.id!) },
  { table: 'execution_signals', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'key_id', dataColumn: 'data', extra: [], aad: (r) => aad.signal(r.id!) },
  { table: 'schedules', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'key_id', dataColumn: 'input', extra: [], aad: (r) => aad.scheduleInput(r.id!) },
  { table: 'schedules', key: [{ name: 'id', type: 'uuid' }], keyIdColumn: 'identity_key_id', dataColumn: 'identity', extra: [], aad: (r) => aad.scheduleIdentity(r.id!) },
];

/** A resealing batch's outcome: `next` is the keyset cursor after it (null: the column is done). */
export interface ResealBatch {
  readonly resealed: number;
  /** Envelopes that did not open (their key is not configured, or they were tampered with): left as they are. */
  readonly unreadable: number;
  readonly next: readonly string[] | null;
}

/**
 * Reseals one batch of a column in one transaction: the next `limit` rows after `after` (keyset
 * order of the primary key) whose envelope is under another key than `currentKeyId` are opened
 * and sealed again under the current key, with the same associated data. Rows another
 * transaction holds are skipped (`SKIP LOCKED`: a live node is writing them, and writes under the
 * current key) and counted by the closing tally like any other row left behind; so are envelopes
 * that do not open. Running it again is harmless: resealed rows no longer match.
 */
export async function resealBatch(pool: Pool, sealer: EngineSealer, currentKeyId: string, column: SealedColumn, after: readonly string[] | null, limit: number): Promise<ResealBatch> {
  const keys = column.key.map((k) => `"${k.name}"`).join(', ');
  const keyText = column.key.map((k, i) => `"${k.name}"::text AS "k${i}"`).join(', ');
  const extra = column.extra.map((name) => `, "${name}"::text AS "${name}"`).join('');
  const cursor = after === null ? '' : `AND (${keys}) > (${column.key.map((k, i) => `$${i + 3}::${k.type}`).join(', ')})`;
  return withTransaction(pool, async (tx) => {
    const { rows } = await tx.query<Record<string, string> & { key_id: string; data: Buffer }>(
      `SELECT ${keyText}${extra}, "${column.keyIdColumn}" AS key_id, "${column.dataColumn}" AS data FROM "${column.table}"
        WHERE "${column.keyIdColumn}" IS NOT NULL AND "${column.keyIdColumn}" <> $1 ${cursor}
        ORDER BY ${keys} LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [currentKeyId, limit, ...(after ?? [])],
    );
    let resealed = 0;
    let unreadable = 0;
    for (const row of rows) {
      const named: Record<string, string> = { ...row };
      column.key.forEach((k, i) => (named[k.name] = row[`k${i}`]!));
      const associated = column.aad(named);
      let envelope: { keyId: string; data: Buffer };
      try {
        envelope = sealer.seal(sealer.open({ keyId: row.key_id, data: row.data }, associated), associated);
      } catch {
        unreadable += 1;
        continue;
      }
      await tx.query(
        `UPDATE "${column.table}" SET "${column.keyIdColumn}" = $1, "${column.dataColumn}" = $2
          WHERE (${keys}) = (${column.key.map((k, i) => `$${i + 3}::${k.type}`).join(', ')})`,
        [envelope.keyId, envelope.data, ...column.key.map((_k, i) => row[`k${i}`]!)],
      );
      resealed += 1;
    }
    const last = rows.at(-1);
    return { resealed, unreadable, next: rows.length < limit || last === undefined ? null : column.key.map((_k, i) => last[`k${i}`]!) };
  });
}

/** How many envelopes of a column each key other than `currentKeyId` still seals. */
export async function sealedUnderOtherKeys(pool: Pool, currentKeyId: string, column: SealedColumn): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ key_id: string; n: number }>(
    `SELECT "${column.keyIdColumn}" AS key_id, count(*)::int AS n FROM "${column.table}"
      WHERE "${column.keyIdColumn}" IS NOT NULL AND "${column.keyIdColumn}" <> $1 GROUP BY 1`,
    [currentKeyId],
  );
  return new Map(rows.map((r) => [r.key_id, r.n]));
}
