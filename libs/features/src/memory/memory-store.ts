import { Inject, Injectable } from '@nestjs/common';
import { isUuid, newId, NotFound, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import type { Queryable, SealedColumn } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database, type Sql } from '../../../platform/src/database/sql';
import { checkRoomFor, lockLimit, roomLeft } from '../../../platform/src/limits/organization-limits';
import { Sealer } from '../../../platform/src/sealing/sealer';
import { memoryLocks } from './memory-locks';
import {
  accessAdmitsSql,
  contentTokens,
  MEMORY_VIEW_COLUMNS,
  type MemoryAccess,
  type MemoryItemView,
  type MemoryItemWithContent,
  type MemoryReader,
  type MemorySource,
  type MemoryStatus,
} from './memory-view';
import { equalCandidatesStatement, normalizedContent } from './equal-content';
import { selectionStatement } from './selection-sql';
import { WordIndexes } from './word-index';

/** A new item's fields, already checked. */
export interface NewMemoryItem {
  readonly content: string;
  readonly tags: readonly string[];
  readonly access: MemoryAccess;
  readonly sources: readonly MemorySource[];
}

/** What a Turn asks memory for: the reader, its words and tags, and the budget. */
export interface MemorySelectionRequest {
  readonly organizationId: string;
  readonly botId: string;
  readonly reader: MemoryReader;
  /** The text the Turn answers: its words rank items by word and tag matches. */
  readonly text: string;
  readonly budgetTokens: number;
}

export interface MemorySelection {
  readonly ids: readonly string[];
  readonly contents: readonly string[];
}

/** Candidates ranked in SQL before the budget is applied; enough to fill any sane budget. */
const SELECTION_CANDIDATES = 100;

/**
 * Bot memory (decision 030): the one owner of memory items. Every read takes the Bot's shared
 * memory lock and every change its exclusive one, in the transaction that does the work (MEM-02).
 * Reads resolve tags, access rules and source links first, in SQL, and open only the content of
 * the items they return (MEM-01). Callers get selections and single items, never the pool
 * (MEM-03); a change of tags or status never touches the sealed content.
 */
@Injectable()
export class MemoryStore {
  readonly words: WordIndexes;

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Sealer) private readonly sealer: Sealer,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {
    this.words = new WordIndexes(config.masterKey, config.oldMasterKeys);
  }

  /**
   * How many more items the organization may store (`memoryItems`, decision 076), holding the
   * limit's lock until the transaction ends: the learner stores at most this many.
   */
  async room(tx: Queryable, organizationId: string): Promise<number> {
    await lockLimit(tx, organizationId, 'memoryItems');
    return roomLeft(tx, organizationId, this.config.organizationLimits, 'memoryItems');
  }

  /** Runs `work` in a transaction holding the Bot's shared memory lock. */
  reading<T>(botId: string, work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await memoryLocks.shared(tx, botId);
      return work(tx);
    });
  }

  /** Runs `work` in a transaction holding the Bot's exclusive memory lock. */
  changing<T>(botId: string, work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await memoryLocks.exclusive(tx, botId);
      return work(tx);
    });
  }

  async create(caller: MemberCaller, botId: string, item: NewMemoryItem): Promise<MemoryItemView> {
    return this.changing(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      await checkRoomFor(tx, caller.organizationId, this.config.organizationLimits, 'memoryItems');
      const created = await this.insert(tx, caller.organizationId, botId, newId(), item);
      // A fresh ID never exists already.
      if (created === null) throw new Error('a new memory item ID was taken');
      return created;
    });
  }

  /**
   * Inserts one item (the caller holds the exclusive lock). An ID that exists already is kept as
   * it is: answered when it is this same item of this Bot with this access (a replayed learning
   * step), null otherwise, so a writer never rewrites, nor learns the metadata of, an item it did
   * not write.
   */
  async insert(tx: Queryable, organizationId: string, botId: string, id: string, item: NewMemoryItem): Promise<MemoryItemView | null> {
    const envelope = this.sealer.seal(Buffer.from(item.content, 'utf8'), contentAad(id));
    const { rows } = await tx.query<MemoryItemView>(
      `INSERT INTO memory_items (id, organization_id, bot_id, tags, access, sources, words_key_id, tokens, content_key_id, content)
       VALUES ($1, $2, $3, $4::text[], $5::jsonb, $6::jsonb, $7, $8, $9, $10)
       ON CONFLICT (id) DO NOTHING
       RETURNING ${MEMORY_VIEW_COLUMNS}`,
      [id, organizationId, botId, item.tags, JSON.stringify(item.access), JSON.stringify(item.sources), this.words.current.keyId, contentTokens(item.content), envelope.keyId, envelope.data],
    );
    const inserted = rows[0];
    if (inserted === undefined) {
      const { rows: same } = await tx.query<MemoryItemView>(
        `SELECT ${MEMORY_VIEW_COLUMNS} FROM memory_items WHERE id = $1 AND bot_id = $2 AND organization_id = $3 AND access = $4::jsonb`,
        [id, botId, organizationId, JSON.stringify(item.access)],
      );
      return same[0] ?? null;
    }
    await tx.query({
      name: 'memory.insert_words',
      text: 'INSERT INTO memory_words (bot_id, word, item_id) SELECT $1, w, $2 FROM unnest($3::text[]) AS w',
      values: [botId, id, this.words.current.hashes(botId, item.content)],
    });
    return inserted;
  }

  /**
   * The ID of an active item of this Bot with this access rule whose content equals `content`
   * (decision 086), or null; `exceptId` is left out (a replayed learning step's own item). The
   * caller holds the exclusive lock. Only items with exactly the same indexed words are opened.
   */
  async equalItem(tx: Queryable, organizationId: string, botId: string, item: { readonly content: string; readonly access: MemoryAccess }, exceptId: string): Promise<string | null> {
    const wanted = normalizedContent(item.content);
    for (const { keyId, hashes } of this.words.byKey(botId, item.content)) {
      const { rows } = await tx.query<{ id: string; keyId: string; content: Buffer }>({
        ...equalCandidatesStatement,
        values: [botId, organizationId, JSON.stringify(item.access), keyId, hashes, exceptId],
      });
      const equal = rows.find((row) => normalizedContent(this.open(row.id, row.keyId, row.content)) === wanted);
      if (equal !== undefined) return equal.id;
    }
    return null;
  }

  /**
   * A page of items without content, only those the caller may read (IDN-08: the access rule is a
   * condition of the query, so neither the page nor `q` says anything of an item it excludes);
   * `tags`: every one named; `q`: every whole word, through the keyed index.
   */
  async list(caller: MemberCaller, botId: string, filter: { readonly tags: readonly string[]; readonly q: string | null }, page: PageRequest): Promise<Page<MemoryItemView>> {
    const words = filter.q === null ? { hashes: [], words: 0 } : this.words.query(botId, filter.q);
    return this.reading(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      // A query with no indexable word matches nothing rather than everything.
      if (filter.q !== null && words.words === 0) return { data: [], next: null };
      const rows = await tx.rows<MemoryItemView>(
        `SELECT ${MEMORY_VIEW_COLUMNS} FROM memory_items m
          WHERE bot_id = $1 AND organization_id = $2 AND tags @> $3::text[] AND ${callerAdmitted(7)}
            AND (cardinality($4::text[]) = 0 OR id IN (
                  SELECT item_id FROM memory_words WHERE bot_id = $1 AND word = ANY($4::text[]) GROUP BY item_id HAVING count(*) = $10::int))
            AND ($5::uuid IS NULL OR id > $5::uuid)
          ORDER BY id LIMIT $6`,
        [botId, caller.organizationId, filter.tags, words.hashes, page.after, page.limit + 1, ...callerParams(caller), words.words],
      );
      return toPage(rows, page.limit);
    });
  }

  /** One item with its content: only members its rule admits, and owners and admins, find it; anyone else gets 404, as for an item that does not exist. */
  async get(caller: MemberCaller, botId: string, id: string): Promise<MemoryItemWithContent> {
    return this.reading(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView & { contentKeyId: string; content: Buffer }>(
        `SELECT ${MEMORY_VIEW_COLUMNS}, content_key_id AS "contentKeyId", content FROM memory_items m
          WHERE id = $1 AND bot_id = $2 AND organization_id = $3 AND ${callerAdmitted(4)}`,
        [id, botId, caller.organizationId, ...callerParams(caller)],
      );
      if (row === undefined) throw new NotFound('Memory');
      const { contentKeyId, content, ...view } = row;
      return { ...view, content: this.open(id, contentKeyId, content) };
    });
  }

  /**
   * Changes tags and status only: the sealed content and its word index stay as they are, byte
   * for byte (MEM-03). A member the item's rule excludes gets 404, as for get.
   */
  async update(caller: MemberCaller, botId: string, id: string, changes: { readonly tags?: readonly string[]; readonly status?: MemoryStatus }): Promise<MemoryItemView> {
    return this.changing(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView>(
        `UPDATE memory_items m SET tags = COALESCE($4::text[], tags), status = COALESCE($5, status), updated_at = now()
          WHERE id = $1 AND bot_id = $2 AND organization_id = $3 AND ${callerAdmitted(6)} RETURNING ${MEMORY_VIEW_COLUMNS}`,
        [id, botId, caller.organizationId, changes.tags ?? null, changes.status ?? null, ...callerParams(caller)],
      );
      if (row === undefined) throw new NotFound('Memory');
      return row;
    });
  }

  /** Deletes one item the caller may read; one its rule excludes is 404. */
  async delete(caller: MemberCaller, botId: string, id: string): Promise<MemoryItemView> {
    return this.changing(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView>(
        `DELETE FROM memory_items m WHERE id = $1 AND bot_id = $2 AND organization_id = $3 AND ${callerAdmitted(4)} RETURNING ${MEMORY_VIEW_COLUMNS}`,
        [id, botId, caller.organizationId, ...callerParams(caller)],
      );
      if (row === undefined) throw new NotFound('Memory');
      return row;
    });
  }

  /**
   * The context a Turn gets (MEM-01, MEM-03): under the shared lock, one statement counts the
   * word matches per item from the keyed index and the tag matches, keeps the Bot's active items
   * whose access admits the reader and whose sources are still visible, and ranks them (a tag
   * match counts twice a word match, newer first).
   * The budget is filled from the token estimates; only the chosen items are then opened.
   */
  async select(request: MemorySelectionRequest): Promise<MemorySelection> {
    const words = this.words.query(request.botId, request.text).hashes;
    const tags = normalizedTagCandidates(request.text);
    if (words.length === 0 && tags.length === 0) return { ids: [], contents: [] };
    return this.reading(request.botId, async (tx) => {
      const reader = request.reader;
      const candidates = await tx.rows<{ id: string; tokens: number }>({ ...selectionStatement, values: [
        request.botId,
        request.organizationId,
        tags,
        words,
        reader.kind === 'member' ? reader.memberId : null,
        reader.kind === 'member' ? reader.role : null,
        SELECTION_CANDIDATES,
      ] });
      const chosen: string[] = [];
      let left = request.budgetTokens;
      for (const candidate of candidates) {
        if (candidate.tokens > left) continue;
        chosen.push(candidate.id);
        left -= candidate.tokens;
      }
      if (chosen.length === 0) return { ids: [], contents: [] };
      const sealed = await tx.rows<{ id: string; keyId: string; content: Buffer }>(
        `SELECT id, content_key_id AS "keyId", content FROM memory_items WHERE id = ANY($1::uuid[])`,
        [chosen],
      );
      const byId = new Map(sealed.map((row) => [row.id, row]));
      const contents = chosen.map((id) => {
        const row = byId.get(id)!;
        return this.open(id, row.keyId, row.content);
      });
      return { ids: chosen, contents };
    });
  }

  private open(id: string, keyId: string, data: Buffer): string {
    return this.sealer.open({ keyId, data }, contentAad(id)).toString('utf8');
  }
}

/**
 * The API caller's admission as a condition on `m` with its three parameters from `at`: whether
 * the caller sees everything (owners and admins), its member ID and its role.
 */
function callerAdmitted(at: number): string {
  return `($${at}::boolean OR ${accessAdmitsSql('m', `$${at + 1}`, `$${at + 2}`)})`;
}

/** The parameters of callerAdmitted: owners and admins see every item, everyone else what the rule admits. */
function callerParams(caller: MemberCaller): [boolean, string, string] {
  return [caller.role === 'owner' || caller.role === 'admin', caller.memberId, caller.role];
}

/** Memory items' sealed content (decision 030), as master-key rotation lists it; `rekeyMemoryItems` reseals it, under the Bot's lock. */
export const MEMORY_CONTENT_COLUMN: SealedColumn = {
  table: 'memory_items',
  key: [{ name: 'id', type: 'uuid' }],
  keyIdColumn: 'content_key_id',
  dataColumn: 'content',
  extra: [],
  aad: (row) => contentAad(row.id!),
};

/** One batch of `rekeyMemoryItems`: `next` is the keyset cursor after it (null: done). */
export interface MemoryRekeyBatch {
  readonly resealed: number;
  readonly reindexed: number;
  readonly unreadable: number;
  readonly next: string | null;
}

/**
 * Master-key rotation for memory (decision 071): the next `limit` items after `after` (by ID)
 * whose content or word index is under another key than the current one get their content
 * sealed again and their words indexed again under the current key, in one transaction holding
 * the exclusive memory lock of each Bot in the batch (MEM-02; taken in Bot order before any row,
 * as every memory change takes its lock first). Items whose content does not open are left as
 * they are and counted.
 */
export async function rekeyMemoryItems(db: Database, sealer: Sealer, words: WordIndexes, after: string | null, limit: number): Promise<MemoryRekeyBatch> {
  const current = words.current.keyId;
  const stale = `(content_key_id <> $1 OR words_key_id <> $1) AND ($2::uuid IS NULL OR id > $2::uuid)`;
  const candidates = await db.rows<{ id: string; botId: string }>(`SELECT id, bot_id AS "botId" FROM memory_items WHERE ${stale} ORDER BY id LIMIT $3`, [current, after, limit]);
  if (candidates.length === 0) return { resealed: 0, reindexed: 0, unreadable: 0, next: null };
  const ids = candidates.map((c) => c.id);
  const outcome = await db.transaction(async (tx) => {
    for (const botId of [...new Set(candidates.map((c) => c.botId))].sort()) await memoryLocks.exclusive(tx, botId);
    const rows = await tx.rows<{ id: string; botId: string; contentKeyId: string; content: Buffer; wordsKeyId: string }>(
      `SELECT id, bot_id AS "botId", content_key_id AS "contentKeyId", content, words_key_id AS "wordsKeyId" FROM memory_items
        WHERE id = ANY($2::uuid[]) AND (content_key_id <> $1 OR words_key_id <> $1) FOR UPDATE`,
      [current, ids],
    );
    let resealed = 0;
    let reindexed = 0;
    let unreadable = 0;
    for (const row of rows) {
      let plain: Buffer;
      try {
        plain = sealer.open({ keyId: row.contentKeyId, data: row.content }, contentAad(row.id));
      } catch {
        unreadable += 1;
        continue;
      }
      if (row.contentKeyId !== current) {
        const envelope = sealer.seal(plain, contentAad(row.id));
        await tx.query('UPDATE memory_items SET content_key_id = $2, content = $3 WHERE id = $1', [row.id, envelope.keyId, envelope.data]);
        resealed += 1;
      }
      if (row.wordsKeyId !== current) {
        await tx.query('DELETE FROM memory_words WHERE item_id = $1', [row.id]);
        await tx.query('INSERT INTO memory_words (bot_id, word, item_id) SELECT $1, w, $2 FROM unnest($3::text[]) AS w', [row.botId, row.id, words.current.hashes(row.botId, plain.toString('utf8'))]);
        await tx.query('UPDATE memory_items SET words_key_id = $2 WHERE id = $1', [row.id, current]);
        reindexed += 1;
      }
    }
    return { resealed, reindexed, unreadable };
  });
  return { ...outcome, next: candidates.length < limit ? null : ids.at(-1)! };
}

/** Memory items whose word index is under another key than the current one, by key ID. */
export async function memoryWordsUnderOtherKeys(db: Database, currentKeyId: string): Promise<Map<string, number>> {
  const rows = await db.rows<{ keyId: string; n: number }>('SELECT words_key_id AS "keyId", count(*)::int AS n FROM memory_items WHERE words_key_id <> $1 GROUP BY 1', [currentKeyId]);
  return new Map(rows.map((r) => [r.keyId, r.n]));
}

/** Binds a content envelope to its item: moved to another row it fails to open. */
export function contentAad(itemId: string): string {
  return `openbot.memory.v1:${itemId}`;
}

/** The Bot of the organization, or NotFound (another organization's Bot is unknown, IDN-08). */
async function requireBot(tx: Sql, organizationId: string, botId: string): Promise<void> {
  if (!isUuid(botId)) throw new NotFound('Bot');
  const found = await tx.count('SELECT 1 FROM bots WHERE id = $1 AND organization_id = $2', [botId, organizationId]);
  if (found === 0) throw new NotFound('Bot');
}

/** The Turn's words as tag candidates: tags are plain and lower-case, so a word can name one. */
function normalizedTagCandidates(text: string): string[] {
  const seen = new Set<string>();
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(/[\p{L}\p{N}_.:-]{2,64}/gu)) {
    seen.add(match[0]);
    if (seen.size >= 256) break;
  }
  return [...seen];
}
