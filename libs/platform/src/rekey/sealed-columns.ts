import { ENGINE_SEALED_COLUMNS, type SealedColumn } from '@openbot/engine';
import { SEALED_RECORDS_COLUMN } from '../sealing/sealed-records';

/**
 * The platform's columns that hold an envelope of the Sealer: the engine's and sealed_records. The
 * features' keyed stores add theirs at the composition root (SEALED_COLUMNS in features.ts).
 */
export const PLATFORM_SEALED_COLUMNS: readonly SealedColumn[] = [...ENGINE_SEALED_COLUMNS, SEALED_RECORDS_COLUMN];

/** A column's name as the progress lines print it. */
export function columnName(column: SealedColumn): string {
  return `${column.table}.${column.dataColumn}`;
}
