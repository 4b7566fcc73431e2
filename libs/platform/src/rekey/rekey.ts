import { type SealedColumn } from '@openbot/engine';
import { resealBatch, sealedUnderOtherKeys } from '@openbot/engine/node';
import type { Pool } from 'pg';
import type { MasterKey } from '../config/config';
import { Database } from '../database/sql';
import { Keyring } from '../sealing/keyring';
import { Sealer } from '../sealing/sealer';
import type { KeyedStore } from './keyed-store';
import { columnName } from './sealed-columns';

export interface RekeyOptions {
  readonly pool: Pool;
  /** OPENBOT_MASTER_KEY: everything is sealed again under it. */
  readonly masterKey: MasterKey;
  /** OPENBOT_MASTER_KEYS_OLD: what may still be sealed under them is opened with them. */
  readonly oldMasterKeys: readonly MasterKey[];
  /** Rows per transaction. */
  readonly batchSize?: number;
  /** One progress line at a time. */
  readonly log: (line: string) => void;
}

/** What rekey left behind: per key ID other than the current one, how many records it still seals or indexes. */
export interface RekeyReport {
  readonly currentKeyId: string;
  readonly resealed: number;
  readonly reindexed: number;
  readonly unreadable: number;
  readonly remaining: ReadonlyMap<string, number>;
}

const DEFAULT_BATCH = 500;

/** What the product seals, handed in by the composition root (features.ts): rekey names no feature. */
export interface SealedData {
  /** Every sealed column (SEALED_COLUMNS), the keyed stores' columns included. */
  readonly columns: readonly SealedColumn[];
  /** The features' columns that go with a key-derived index (memory), each resealed and re-indexed by its feature. */
  readonly stores: readonly KeyedStore[];
}

/**
 * `openbot rekey` (decision 071): reseals every sealed column under the current master key and
 * rebuilds the keyed stores' indexes (memory words) under it, batch by batch: each batch is one
 * transaction over the next rows in primary-key order (keyset pagination), so a stopped run has
 * kept everything it committed and a new run picks up what is still under an old key. Running it
 * again finds nothing to do. At the end it counts, over every column, what any other key still
 * seals: an old key may leave OPENBOT_MASTER_KEYS_OLD once that count is zero for it.
 */
export async function runRekey(options: RekeyOptions, sealed: SealedData): Promise<RekeyReport> {
  const { pool, masterKey, log } = options;
  const limit = options.batchSize ?? DEFAULT_BATCH;
  const sealer = new Sealer(new Keyring(masterKey, options.oldMasterKeys));
  const db = new Database(pool);
  const stores = sealed.stores.map((store) => store.open({ db, sealer, masterKey, oldMasterKeys: options.oldMasterKeys }));
  const storeColumns = new Set(sealed.stores.map((store) => store.column));
  const current = masterKey.id;
  let resealed = 0;
  let reindexed = 0;
  let unreadable = 0;
  log(`sealing everything under key "${current}"`);
  for (const column of sealed.columns) {
    // A keyed store's column is resealed with its index, by its feature (below).
    if (storeColumns.has(column)) continue;
    let after: readonly string[] | null = null;
    let done = 0;
    do {
      const batch = await resealBatch(pool, sealer, current, column, after, limit);
      done += batch.resealed;
      unreadable += batch.unreadable;
      if (batch.resealed > 0 || batch.unreadable > 0) log(`${columnName(column)}: ${done} resealed${batch.unreadable > 0 ? `, ${batch.unreadable} unreadable` : ''}`);
      after = batch.next;
    } while (after !== null);
    resealed += done;
  }
  for (const store of stores) {
    let after: string | null = null;
    do {
      const batch = await store.batch(after, limit);
      resealed += batch.resealed;
      reindexed += batch.reindexed;
      unreadable += batch.unreadable;
      if (batch.resealed + batch.reindexed + batch.unreadable > 0) log(store.describe(batch));
      after = batch.next;
    } while (after !== null);
  }
  const remaining = new Map<string, number>();
  const add = (counts: ReadonlyMap<string, number>): void => counts.forEach((n, keyId) => remaining.set(keyId, (remaining.get(keyId) ?? 0) + n));
  for (const column of sealed.columns) add(await sealedUnderOtherKeys(pool, current, column));
  for (const store of stores) add(await store.underOtherKeys(current));
  const indexes = sealed.stores.map((store) => store.indexes).join(' and ') || 'indexes';
  log(`done: ${resealed} resealed, ${reindexed} ${indexes} rebuilt, ${unreadable} unreadable`);
  if (remaining.size === 0) log(`no record is sealed or indexed under any key but "${current}": every old key may leave OPENBOT_MASTER_KEYS_OLD`);
  for (const [keyId, n] of remaining) log(`${n} records still under key "${keyId}": keep it in OPENBOT_MASTER_KEYS_OLD${options.oldMasterKeys.some((k) => k.id === keyId) ? ' and run rekey again' : ' (it is not configured: these records cannot be opened)'}`);
  return { currentKeyId: current, resealed, reindexed, unreadable, remaining };
}
