import type { SealedColumn } from '@openbot/engine';
import type { MasterKey } from '../config/config';
import type { Database } from '../database/sql';
import type { Sealer } from '../sealing/sealer';

/** One batch of a keyed store's rekey: `next` is the keyset cursor after it (null: done). */
export interface KeyedStoreBatch {
  readonly resealed: number;
  readonly reindexed: number;
  readonly unreadable: number;
  readonly next: string | null;
}

/** A keyed store opened for one rekey run under the run's keys. */
export interface KeyedStoreRun {
  /** Reseals the column and rebuilds the index of the next `limit` rows after `after`. */
  batch(after: string | null, limit: number): Promise<KeyedStoreBatch>;
  /** The progress line of a batch that did something. */
  describe(batch: KeyedStoreBatch): string;
  /** Per key ID other than `currentKeyId`, how many rows still have their index under it. */
  underOtherKeys(currentKeyId: string): Promise<ReadonlyMap<string, number>>;
}

/**
 * The port rekey owns for a feature whose sealed column goes with an index derived from the master
 * key (memory's content and its word index, decision 030): the feature reseals and re-indexes both
 * itself, batch by batch, and counts what other keys still index. The composition root hands the
 * features' stores to rekey (libs/features/src/features.ts), so rekey names no feature.
 */
export interface KeyedStore {
  /** Its sealed column: left out of the column-by-column pass, counted at the end with the others. */
  readonly column: SealedColumn;
  /** What it rebuilds, as rekey's last progress line names it. */
  readonly indexes: string;
  open(run: { readonly db: Database; readonly sealer: Sealer; readonly masterKey: MasterKey; readonly oldMasterKeys: readonly MasterKey[] }): KeyedStoreRun;
}
