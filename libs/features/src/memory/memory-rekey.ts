import type { KeyedStore } from '../../../platform/src/rekey/keyed-store';
import { MEMORY_CONTENT_COLUMN, memoryWordsUnderOtherKeys, rekeyMemoryItems } from './memory-store';
import { WordIndexes } from './word-index';

/** Memory's part of `openbot rekey` (decision 071): its content is resealed with its word index, under the Bot's lock (rekeyMemoryItems). */
export const MEMORY_KEYED_STORE: KeyedStore = {
  column: MEMORY_CONTENT_COLUMN,
  indexes: 'memory word indexes',
  open({ db, sealer, masterKey, oldMasterKeys }) {
    const words = new WordIndexes(masterKey, oldMasterKeys);
    return {
      batch: (after, limit) => rekeyMemoryItems(db, sealer, words, after, limit),
      describe: (batch) => `memory_items: ${batch.resealed} contents resealed, ${batch.reindexed} word indexes rebuilt${batch.unreadable > 0 ? `, ${batch.unreadable} unreadable` : ''}`,
      underOtherKeys: (currentKeyId) => memoryWordsUnderOtherKeys(db, currentKeyId),
    };
  },
};
