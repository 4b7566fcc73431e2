import { accessAdmitsSql } from './memory-view';

/**
 * The selection statement (MEM-01): metadata only, never content. $1 Bot, $2 organization,
 * $3 tag candidates, $4 word hashes, $5 the reader's member ID and $6 role (null for a service),
 * $7 how many candidates (four times as many matched items are looked at, best first).
 *
 * Matches are counted first: word matches from memory_words (one index range per query word,
 * grouped by item), tag matches of the items that share a tag (twice as much). The matched items
 * then keep only those that are active, whose access rule admits the reader, and whose every
 * source is still visible in the organization: a closed or deleted Chat or Turn hides them, and
 * so does a file that was deleted (or is still uploading): files are the organization's, so a
 * ready file of it is visible to every reader of its Bot (`files.read` is every role's).
 */
export const selectionStatement = {
  name: 'memory.select_ranked_files',
  text: `WITH matched AS (
      SELECT item_id, sum(score)::int AS score FROM (
        SELECT item_id, count(*) AS score FROM memory_words WHERE bot_id = $1 AND word = ANY($4::text[]) GROUP BY item_id
        UNION ALL
        SELECT id, 2 * (SELECT count(*) FROM unnest(tags) AS t WHERE t = ANY($3::text[])) FROM memory_items WHERE bot_id = $1 AND tags && $3::text[]
      ) AS hits GROUP BY item_id
      -- Only the best-matched few are looked at further: the budget never needs more.
      ORDER BY 2 DESC, 1 DESC LIMIT 4 * $7::int
    )
    SELECT m.id, m.tokens
      FROM matched JOIN memory_items m ON m.id = matched.item_id
     WHERE m.bot_id = $1 AND m.organization_id = $2 AND m.status = 'active'
       AND ${accessAdmitsSql('m', '$5', '$6')}
       AND (m.sources = '[]'::jsonb OR NOT EXISTS (
         SELECT 1 FROM jsonb_array_elements(m.sources) s
          WHERE (s->>'type' = 'chat' AND NOT EXISTS (
                   SELECT 1 FROM chats c WHERE c.id = (s->>'id')::uuid AND c.organization_id = m.organization_id AND c.closed_at IS NULL))
             OR (s->>'type' = 'turn' AND NOT EXISTS (
                   SELECT 1 FROM chat_turns t JOIN chats c ON c.id = t.chat_id
                    WHERE t.id = (s->>'id')::uuid AND c.organization_id = m.organization_id AND c.closed_at IS NULL))
             OR (s->>'type' = 'file' AND NOT EXISTS (
                   SELECT 1 FROM files f WHERE f.id = (s->>'id')::uuid AND f.organization_id = m.organization_id AND f.state = 'ready'))))
     ORDER BY matched.score DESC, m.id DESC
     LIMIT $7`,
};
