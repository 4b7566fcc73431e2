/**
 * Equal content (decision 086): two texts are equal when they are the same after NFKC, lower case,
 * runs of white space made one space, and surrounding white space and a final full stop removed.
 * Learning never stores an item whose content equals an active item of the same Bot with the same
 * access rule.
 */
export function normalizedContent(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/[.。]+$/u, '')
    .trim();
}

/**
 * The active items of a Bot with this access rule whose indexed words are exactly these (the
 * words of an equal text are the same): $1 Bot, $2 organization, $3 access rule, $4 the words
 * key's ID, $5 the word hashes under that key, $6 an item ID to leave out. Only these candidates'
 * content is opened and compared; the caller holds the Bot's exclusive memory lock, so no equal
 * item can be added beside it.
 */
export const equalCandidatesStatement = {
  name: 'memory.equal_candidates',
  text: `SELECT m.id, m.content_key_id AS "keyId", m.content
           FROM memory_items m
          WHERE m.bot_id = $1 AND m.organization_id = $2 AND m.status = 'active' AND m.access = $3::jsonb AND m.words_key_id = $4 AND m.id <> $6
            AND (cardinality($5::text[]) = 0 OR m.id IN (
                  SELECT item_id FROM memory_words WHERE bot_id = $1 AND word = ANY($5::text[]) GROUP BY item_id HAVING count(*) = cardinality($5::text[])))
            AND NOT EXISTS (SELECT 1 FROM memory_words w WHERE w.item_id = m.id AND w.word <> ALL($5::text[]))`,
};
