import type { Queryable } from '@openbot/engine';

/**
 * Learning cursors (FW-03): how far learning got in a Chat of a Bot, as a message position. A
 * commit moves a cursor only forward: a slower learner that commits an older position after a
 * newer one changes nothing, so it can never replace newer progress.
 */
export const memoryCursors = {
  async read(db: Queryable, botId: string, chatId: string): Promise<string> {
    const { rows } = await db.query<{ position: string }>({
      name: 'memory.cursor',
      text: 'SELECT position::text AS position FROM memory_cursors WHERE bot_id = $1 AND chat_id = $2',
      values: [botId, chatId],
    });
    return rows[0]?.position ?? '0';
  },

  /** Answers whether the cursor moved (false: it already was at or past `position`). */
  async commit(db: Queryable, botId: string, chatId: string, position: string): Promise<boolean> {
    const { rowCount } = await db.query({
      name: 'memory.cursor_commit',
      text: `INSERT INTO memory_cursors AS c (bot_id, chat_id, position) VALUES ($1, $2, $3::bigint)
             ON CONFLICT (bot_id, chat_id) DO UPDATE SET position = EXCLUDED.position, updated_at = now()
              WHERE c.position < EXCLUDED.position`,
      values: [botId, chatId, position],
    });
    return rowCount === 1;
  },
};
