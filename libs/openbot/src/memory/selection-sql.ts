/**
 * The selection statement (MEM-01): metadata only, never content. $1 Bot, $2 organization,
 * $3 tag candidates, $4 word hashes, $5 the reader's member ID and $6 role (null for a service),
 * $7 how many candidates. An item is a candidate when it is active, its access rule admits the
 * reader, every source is still visible in the organization (a closed or deleted Chat hides it;
 * file sources are not resolvable yet and hide it, failing closed), and a tag or a word matches.
 */
export const selectionStatement = {
  name: 'memory.select',
  text: `SELECT m.id, m.tokens
     FROM memory_items m
    WHERE m.bot_id = $1 AND m.organization_id = $2 AND m.status = 'active'
      AND (m.tags && $3::text[] OR m.words && $4::text[])
      AND (m.access->>'kind' = 'bot'
           OR (m.access->>'kind' = 'members' AND $5::text IS NOT NULL AND m.access->'ids' ? $5::text)
           OR (m.access->>'kind' = 'roles' AND $6::text IS NOT NULL AND m.access->'roles' ? $6::text))
      AND NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(m.sources) s
         WHERE (s->>'type' = 'chat' AND NOT EXISTS (
                  SELECT 1 FROM chats c WHERE c.id = (s->>'id')::uuid AND c.organization_id = m.organization_id AND c.closed_at IS NULL))
            OR (s->>'type' = 'turn' AND NOT EXISTS (
                  SELECT 1 FROM chat_turns t JOIN chats c ON c.id = t.chat_id
                   WHERE t.id = (s->>'id')::uuid AND c.organization_id = m.organization_id AND c.closed_at IS NULL))
            OR s->>'type' = 'file')
    ORDER BY 2 * cardinality(ARRAY(SELECT unnest(m.tags) INTERSECT SELECT unnest($3::text[])))
             + cardinality(ARRAY(SELECT unnest(m.words) INTERSECT SELECT unnest($4::text[]))) DESC,
             m.id DESC
    LIMIT $7`,
};
