import { ENGINE_SEALED_COLUMNS, type SealedColumn } from '@openbot/engine';
import { MEMORY_CONTENT_COLUMN } from '../memory/memory-store';
import { SEALED_RECORDS_COLUMN } from '../sealing/sealed-records';

/**
 * Every column that holds an envelope of the Sealer, in one place: `openbot rekey` reseals each
 * of them under the current master key and counts what is left under other keys (decision 071).
 * A repo test (test/repo/sealed-columns.spec.ts) fails when a migration adds a `bytea` or
 * `*key_id` column that is neither here nor on its list of unkeyed hashes.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [...ENGINE_SEALED_COLUMNS, SEALED_RECORDS_COLUMN, MEMORY_CONTENT_COLUMN];

/** A column's name as the progress lines print it. */
export function columnName(column: SealedColumn): string {
  return `${column.table}.${column.dataColumn}`;
}
