import { createHmac } from 'node:crypto';
import type { MasterKey } from '../../../platform/src/config/config';

/** Distinct words indexed per item, and looked up per query: enough for whole-word matching, bounded either way. */
const MAX_WORDS = 512;
const WORD = /[\p{L}\p{N}]+/gu;
/** Words too common to say anything: indexed, they would match nearly every item. */
const STOP_WORDS = new Set(
  'is it of to in on at be as or by an if so do we he me my us no the and for are but not you your with this that have has had was were will would can could should from they them their there what when where which who how its our out all any been into than then also just about over some such only other more most very'.split(' '),
);

/**
 * Whole-word search without plaintext (decision 030): each distinct normalized word of an
 * item's content is stored as HMAC-SHA256(per-Bot key, word), truncated to 16 bytes. The per-Bot
 * key derives from the master key, so the index is useless without it and equal words of two
 * Bots do not match. A query's words are hashed the same way and matched against the array.
 */
export class WordIndex {
  private readonly root: Buffer;

  constructor(readonly key: MasterKey) {
    this.root = createHmac('sha256', key.key).update('openbot.memory.words.v1').digest();
  }

  get keyId(): string {
    return this.key.id;
  }

  /** The index entries of a text for one Bot, distinct and at most MAX_WORDS. */
  hashes(botId: string, text: string): string[] {
    const botKey = createHmac('sha256', this.root).update(botId).digest();
    return normalizedWords(text).map((word) => createHmac('sha256', botKey).update(word).digest().subarray(0, 16).toString('base64url'));
  }
}

/**
 * The word indexes of every configured master key, current first: an item's words are hashed under
 * the key its `words_key_id` names, so after a rotation a query hashes its words under each key
 * and an item indexed under a retired key still matches, until `openbot rekey` re-indexes it
 * under the current one (decision 071). Hashes of different keys never equal each other, so one
 * array of all of them matches each item under its own key only.
 */
export class WordIndexes {
  readonly current: WordIndex;
  private readonly all: readonly WordIndex[];

  constructor(current: MasterKey, old: readonly MasterKey[] = []) {
    this.current = new WordIndex(current);
    this.all = [this.current, ...old.filter((key) => key.id !== current.id).map((key) => new WordIndex(key))];
  }

  /** A text's entries under each key apart, with the key's ID: an item's words are compared under the key its `words_key_id` names. */
  byKey(botId: string, text: string): Array<{ readonly keyId: string; readonly hashes: string[] }> {
    return this.all.map((index) => ({ keyId: index.keyId, hashes: index.hashes(botId, text) }));
  }

  /** A query's entries under every key, and how many distinct words it has (an item matching all of them matches that many). */
  query(botId: string, text: string): { readonly hashes: string[]; readonly words: number } {
    const hashes = this.all.flatMap((index) => index.hashes(botId, text));
    return { hashes, words: hashes.length / this.all.length };
  }
}

/** Lower-cased NFKC letter-and-digit runs of two or more characters, without stop words, distinct, in order. */
export function normalizedWords(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (word.length < 2 || STOP_WORDS.has(word) || seen.has(word)) continue;
    seen.add(word);
    if (seen.size >= MAX_WORDS) break;
  }
  return [...seen];
}
