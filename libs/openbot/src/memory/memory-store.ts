import { Inject, Injectable } from '@nestjs/common';
import { Forbidden, isUuid, newId, NotFound, toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Database, type Sql } from '../database/sql';
import { checkRoomFor, lockLimit, roomLeft } from '../limits/organization-limits';
import { Sealer } from '../sealing/sealer';
import { memoryLocks } from './memory-locks';
import {
  admits,
  contentTokens,
  MEMORY_VIEW_COLUMNS,
  type MemoryAccess,
  type MemoryItemView,
  type MemoryItemWithContent,
  type MemoryReader,
  type MemorySource,
  type MemoryStatus,
} from './memory-view';
import { selectionStatement } from './selection-sql';
import { WordIndex } from './word-index';

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
  readonly words: WordIndex;

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Sealer) private readonly sealer: Sealer,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {
    this.words = new WordIndex(config.masterKey);
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
      return this.insert(tx, caller.organizationId, botId, newId(), item);
    });
  }

  /** Inserts one item (the caller holds the exclusive lock); an ID that exists already is kept as it is (a replayed learning step). */
  async insert(tx: Queryable, organizationId: string, botId: string, id: string, item: NewMemoryItem): Promise<MemoryItemView> {
    const envelope = this.sealer.seal(Buffer.from(item.content, 'utf8'), contentAad(id));
    const { rows } = await tx.query<MemoryItemView>(
      `INSERT INTO memory_items (id, organization_id, bot_id, tags, access, sources, words_key_id, tokens, content_key_id, content)
       VALUES ($1, $2, $3, $4::text[], $5::jsonb, $6::jsonb, $7, $8, $9, $10)
       ON CONFLICT (id) DO NOTHING
       RETURNING ${MEMORY_VIEW_COLUMNS}`,
      [id, organizationId, botId, item.tags, JSON.stringify(item.access), JSON.stringify(item.sources), this.words.keyId, contentTokens(item.content), envelope.keyId, envelope.data],
    );
    const inserted = rows[0];
    if (inserted === undefined) return (await tx.query<MemoryItemView>(`SELECT ${MEMORY_VIEW_COLUMNS} FROM memory_items WHERE id = $1`, [id])).rows[0]!;
    await tx.query({
      name: 'memory.insert_words',
      text: 'INSERT INTO memory_words (bot_id, word, item_id) SELECT $1, w, $2 FROM unnest($3::text[]) AS w',
      values: [botId, id, this.words.hashes(botId, item.content)],
    });
    return inserted;
  }

  /** A page of items without content; `tags`: every one named; `q`: every whole word, through the keyed index. */
  async list(caller: MemberCaller, botId: string, filter: { readonly tags: readonly string[]; readonly q: string | null }, page: PageRequest): Promise<Page<MemoryItemView>> {
    const words = filter.q === null ? [] : this.words.hashes(botId, filter.q);
    return this.reading(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      // A query with no indexable word matches nothing rather than everything.
      if (filter.q !== null && words.length === 0) return { data: [], next: null };
      const rows = await tx.rows<MemoryItemView>(
        `SELECT ${MEMORY_VIEW_COLUMNS} FROM memory_items
          WHERE bot_id = $1 AND organization_id = $2 AND tags @> $3::text[]
            AND (cardinality($4::text[]) = 0 OR id IN (
                  SELECT item_id FROM memory_words WHERE bot_id = $1 AND word = ANY($4::text[]) GROUP BY item_id HAVING count(*) = cardinality($4::text[])))
            AND ($5::uuid IS NULL OR id > $5::uuid)
          ORDER BY id LIMIT $6`,
        [botId, caller.organizationId, filter.tags, words, page.after, page.limit + 1],
      );
      return toPage(rows, page.limit);
    });
  }

  /** One item with its content: only members its rule admits, and owners and admins, may read it. */
  async get(caller: MemberCaller, botId: string, id: string): Promise<MemoryItemWithContent> {
    return this.reading(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView & { contentKeyId: string; content: Buffer }>(
        `SELECT ${MEMORY_VIEW_COLUMNS}, content_key_id AS "contentKeyId", content FROM memory_items WHERE id = $1 AND bot_id = $2 AND organization_id = $3`,
        [id, botId, caller.organizationId],
      );
      if (row === undefined) throw new NotFound('Memory');
      const everything = caller.role === 'owner' || caller.role === 'admin';
      if (!everything && !admits(row.access, { kind: 'member', memberId: caller.memberId, role: caller.role })) {
        throw new Forbidden("This memory item's access rule does not admit you.");
      }
      const { contentKeyId, content, ...view } = row;
      return { ...view, content: this.open(id, contentKeyId, content) };
    });
  }

  /** Changes tags and status only: the sealed content and its word index stay as they are, byte for byte (MEM-03). */
  async update(caller: MemberCaller, botId: string, id: string, changes: { readonly tags?: readonly string[]; readonly status?: MemoryStatus }): Promise<MemoryItemView> {
    return this.changing(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView>(
        `UPDATE memory_items SET tags = COALESCE($4::text[], tags), status = COALESCE($5, status), updated_at = now()
          WHERE id = $1 AND bot_id = $2 AND organization_id = $3 RETURNING ${MEMORY_VIEW_COLUMNS}`,
        [id, botId, caller.organizationId, changes.tags ?? null, changes.status ?? null],
      );
      if (row === undefined) throw new NotFound('Memory');
      return row;
    });
  }

  async delete(caller: MemberCaller, botId: string, id: string): Promise<MemoryItemView> {
    return this.changing(botId, async (tx) => {
      await requireBot(tx, caller.organizationId, botId);
      if (!isUuid(id)) throw new NotFound('Memory');
      const row = await tx.one<MemoryItemView>(`DELETE FROM memory_items WHERE id = $1 AND bot_id = $2 AND organization_id = $3 RETURNING ${MEMORY_VIEW_COLUMNS}`, [
        id,
        botId,
        caller.organizationId,
      ]);
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
    const words = this.words.hashes(request.botId, request.text);
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
