import { effectivePermissions, newId, type MemberCaller } from '@openbot/domain';
import { Client } from 'pg';
import { memoryCursors } from '../../../libs/features/src/memory/learning/memory-cursors';
import { memoryPermits } from '../../../libs/features/src/memory/learning/memory-permits';
import { MEMORY_LOCK_NAMESPACE } from '../../../libs/features/src/memory/memory-locks';
import { MemoryStore } from '../../../libs/features/src/memory/memory-store';
import { SealedRecordUnreadable } from '../../../libs/platform/src/sealing/sealer';
import { addProvider } from '../../support/api-assertions';
import { bearer } from '../../support/chat-fixture';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Bot memory's rules against real PostgreSQL (decision 030): the order of reads (MEM-01), the
 * per-Bot advisory locks (MEM-02), selection within a budget instead of the pool (MEM-03),
 * cursor commits that never go back (FW-03) and the shared helper permits (LIM-01).
 */
describe('memory rules', () => {
  let t: TestApp;
  let store: MemoryStore;
  let caller: MemberCaller;
  let botId: string;
  const clients: Client[] = [];

  async function client(): Promise<Client> {
    const c = new Client({ connectionString: t.database.url });
    await c.connect();
    clients.push(c);
    return c;
  }
  const reader = () => ({ kind: 'member' as const, memberId: caller.memberId, role: caller.role });
  const select = (text: string, budgetTokens = 10_000) => store.select({ organizationId: caller.organizationId, botId, reader: reader(), text, budgetTokens });
  const add = (content: string, extra: Partial<Parameters<MemoryStore['create']>[2]> = {}) =>
    store.create(caller, botId, { content, tags: [], access: { kind: 'bot' }, sources: [], ...extra });
  /** Waits until some backend waits for the Bot's memory lock (an event in pg_locks, not a sleep). */
  async function someoneWaitsForTheLock(): Promise<void> {
    for (;;) {
      const rows = await t.database.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = $1::int4::oid`,
        [MEMORY_LOCK_NAMESPACE],
      );
      if (rows[0]!.n > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  beforeAll(async () => {
    t = await startTestApp();
    store = t.app.get(MemoryStore);
    const org = await t.createOrganization('Rules Org');
    await addProvider(t, org.secret, 'local');
    const bot = await t.http().post('/v1/bots').set('authorization', bearer(org.secret)).send({ name: 'B', model: 'local/m' }).expect(201);
    botId = (bot.body as { id: string }).id;
    caller = { kind: 'member', organizationId: org.organizationId, memberId: org.memberId, role: 'owner', apiKeyId: null, permissions: effectivePermissions('owner', null) } as unknown as MemberCaller;
  });
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await t?.close();
  });

  it('[MEM-01] a read resolves tags, rules and sources first and opens only the selected visible items', async () => {
    const chosen = await add('Lighthouse keepers log every storm', { tags: ['lighthouse'] });
    const unmatched = await add('Nothing in common here');
    const notAdmitted = await add('Lighthouse secrets for someone else', { access: { kind: 'members', ids: [newId()] } });
    const archived = await add('Lighthouse archive');
    await store.update(caller, botId, archived.id, { status: 'archived' });
    const hiddenSource = await add('Lighthouse from a chat that does not exist', { sources: [{ type: 'chat', id: newId() }] });
    // Every item that must not be opened gets a ciphertext that cannot be opened: reading it would throw.
    await t.database.query(`UPDATE memory_items SET content = '\\x00'::bytea WHERE id = ANY($1::uuid[])`, [[unmatched.id, notAdmitted.id, archived.id, hiddenSource.id]]);
    const selection = await select('Tell me about the lighthouse');
    expect(selection.ids).toEqual([chosen.id]);
    expect(selection.contents).toEqual(['Lighthouse keepers log every storm']);
    // The selected item's content is opened: broken, the read fails instead of answering something else.
    await t.database.query(`UPDATE memory_items SET content = '\\x00'::bytea WHERE id = $1`, [chosen.id]);
    await expect(select('Tell me about the lighthouse')).rejects.toThrow(SealedRecordUnreadable);
    await t.database.query('DELETE FROM memory_items WHERE bot_id = $1', [botId]);
  });

  it('[MEM-01] an item whose file source the reader can still see is selected; once the file is deleted (or another organization\'s) it is not, and is never opened', async () => {
    const fileId = newId();
    const foreignOrg = await t.createOrganization('Memory file stranger');
    const foreignFile = newId();
    const insertFile = (id: string, organizationId: string) =>
      t.database.query(
        `INSERT INTO files (id, organization_id, created_by, name, content_type, bytes, sha256, object_key, state, upload_deadline, guard_execution_id)
         VALUES ($1, $2, $3, 'atlas.txt', 'text/plain', 5, 'x', $4, 'ready', now(), $5)`,
        [id, organizationId, organizationId === caller.organizationId ? caller.memberId : foreignOrg.memberId, `files/${organizationId}/${id}`, newId()],
      );
    await insertFile(fileId, caller.organizationId);
    await insertFile(foreignFile, foreignOrg.organizationId);
    const fromFile = await add('Atlas pages list every lighthouse', { tags: ['atlas'], sources: [{ type: 'file', id: fileId }] });
    const fromForeign = await add('Atlas of a stranger', { tags: ['atlas'], sources: [{ type: 'file', id: foreignFile }] });
    const fromNowhere = await add('Atlas of a file that never was', { tags: ['atlas'], sources: [{ type: 'file', id: newId() }] });
    await t.database.query(`UPDATE memory_items SET content = '\\x00'::bytea WHERE id = ANY($1::uuid[])`, [[fromForeign.id, fromNowhere.id]]);
    expect((await select('atlas')).ids).toEqual([fromFile.id]);
    // The file deleted: its metadata goes at once, and with it the item's visibility.
    await t.database.query('DELETE FROM files WHERE id = $1', [fileId]);
    await t.database.query(`UPDATE memory_items SET content = '\\x00'::bytea WHERE id = $1`, [fromFile.id]);
    expect((await select('atlas')).ids).toEqual([]);
    await t.database.query('DELETE FROM memory_items WHERE bot_id = $1', [botId]);
  });

  it('[MEM-02] reads share the Bot lock; a change waits for a read in progress and a read waits for a change', async () => {
    await add('Harbour tides are charted daily', { tags: ['harbour'] });
    const other = await client();
    // A read in progress elsewhere holds the shared lock: another read goes ahead at once.
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock_shared($1::int4, hashtext($2))', [MEMORY_LOCK_NAMESPACE, botId]);
    expect((await select('harbour')).contents).toEqual(['Harbour tides are charted daily']);
    // A change waits for it.
    let changed = false;
    const change = add('Harbour master is Ana').then(() => (changed = true));
    await someoneWaitsForTheLock();
    expect(changed).toBe(false);
    await other.query('COMMIT');
    await change;
    // A change in progress holds it alone: a read waits for it, and then sees the change whole.
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock($1::int4, hashtext($2))', [MEMORY_LOCK_NAMESPACE, botId]);
    let read: Awaited<ReturnType<typeof select>> | null = null;
    const reading = select('harbour').then((r) => (read = r));
    await someoneWaitsForTheLock();
    expect(read).toBeNull();
    await other.query('COMMIT');
    await reading;
    expect(read!.contents).toHaveLength(2);
    await t.database.query('DELETE FROM memory_items WHERE bot_id = $1', [botId]);
  });

  it('[MEM-03] selection fills a token budget from the best-ranked items instead of handing over the pool', async () => {
    for (let i = 0; i < 30; i++) await add(`Glacier survey note number ${i} ${'detail '.repeat(10)}`, { tags: i < 3 ? ['glacier'] : [] });
    const all = await select('glacier', 1_000_000);
    expect(all.ids).toHaveLength(30);
    const rows = await t.database.query<{ id: string; tokens: number }>('SELECT id, tokens FROM memory_items WHERE bot_id = $1', [botId]);
    const tokens = new Map(rows.map((r) => [r.id, r.tokens]));
    const budget = 3 * tokens.get(all.ids[0]!)! + 1;
    const some = await select('glacier', budget);
    expect(some.ids.length).toBe(3);
    expect(some.ids.reduce((sum, id) => sum + tokens.get(id)!, 0)).toBeLessThanOrEqual(budget);
    // The three tagged items rank first (a tag match counts more than a word match).
    const tagged = rows.length === 30 ? (await t.database.query<{ id: string }>(`SELECT id FROM memory_items WHERE bot_id = $1 AND 'glacier' = ANY(tags)`, [botId])).map((r) => r.id) : [];
    expect([...some.ids].sort()).toEqual([...tagged].sort());
    await t.database.query('DELETE FROM memory_items WHERE bot_id = $1', [botId]);
  });

  it('[MEM-02] concurrent learning and reading: every read sees whole items, every change lands', async () => {
    const learners = Array.from({ length: 4 }, (_, l) =>
      (async () => {
        for (let i = 0; i < 10; i++) {
          await store.changing(botId, async (tx) => {
            await store.insert(tx, caller.organizationId, botId, newId(), { content: `Comet ${l}-${i} sighted`, tags: ['comet'], access: { kind: 'bot' }, sources: [] });
            await memoryCursors.commit(tx, botId, botId, String(l * 10 + i + 1));
          });
        }
      })(),
    );
    const readers = Array.from({ length: 4 }, () =>
      (async () => {
        const seen: number[] = [];
        for (let i = 0; i < 10; i++) {
          const selection = await select('comet');
          expect(selection.contents).toHaveLength(selection.ids.length);
          for (const content of selection.contents) expect(content).toMatch(/^Comet \d-\d sighted$/);
          seen.push(selection.ids.length);
        }
        return seen;
      })(),
    );
    const [, seen] = await Promise.all([Promise.all(learners), Promise.all(readers)]);
    // Each reader saw the pool only grow.
    for (const counts of seen) expect([...counts].sort((a, b) => a - b)).toEqual(counts);
    expect((await select('comet')).ids).toHaveLength(40);
    await t.database.query('DELETE FROM memory_items WHERE bot_id = $1', [botId]);
  });

  it('[FW-03] two learners racing their cursor commits: the newer progress wins, whichever commits last', async () => {
    const chatId = newId();
    const a = await client();
    const b = await client();
    // The newer learner commits first; the older one's later commit changes nothing.
    expect(await memoryCursors.commit(b, botId, chatId, '14')).toBe(true);
    expect(await memoryCursors.commit(a, botId, chatId, '10')).toBe(false);
    expect(await memoryCursors.read(b, botId, chatId)).toBe('14');
    // Both in flight at once: the older one holds the row, the newer one waits for it, and wins.
    await a.query('BEGIN');
    await b.query('BEGIN');
    expect(await memoryCursors.commit(a, botId, chatId, '20')).toBe(true);
    const newer = memoryCursors.commit(b, botId, chatId, '30');
    const older = client().then(async (c) => {
      await c.query('BEGIN');
      return c;
    });
    await a.query('COMMIT');
    expect(await newer).toBe(true);
    await b.query('COMMIT');
    const late = await older;
    expect(await memoryCursors.commit(late, botId, chatId, '25')).toBe(false);
    await late.query('COMMIT');
    expect(await memoryCursors.read(a, botId, chatId)).toBe('30');
  });

  it('[LIM-01] helper permits are shared rows: never more holders than the cap, a holder keeps its permit, a release frees one', async () => {
    const db = await client();
    await db.query('DELETE FROM memory_permits');
    const executions = Array.from({ length: 10 }, () => newId());
    const slots = await Promise.all(executions.map(async (id) => memoryPermits.take(await client(), id, 3)));
    expect(slots.filter((s) => s !== null).sort()).toEqual([1, 2, 3]);
    const holder = executions[slots.findIndex((s) => s !== null)]!;
    const waiter = executions[slots.findIndex((s) => s === null)]!;
    // A takeover of the holder (another node, the same execution) finds its permit: the cap is not reset.
    expect(await memoryPermits.take(db, holder, 3)).toBe(await memoryPermits.slotOf(db, holder));
    expect(await memoryPermits.take(db, waiter, 3)).toBeNull();
    await db.query(memoryPermits.releaseStatement, [holder]);
    expect(await memoryPermits.take(db, waiter, 3)).not.toBeNull();
    const [count] = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM memory_permits')).rows;
    expect(count!.n).toBe(3);
    await db.query('DELETE FROM memory_permits');
  });
});
