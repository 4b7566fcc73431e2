import { FACTS_COLUMNS } from './executions';
import { FINAL_STATES, type Statement } from './statement';

/**
 * The SQL of children and their notices: open attached children, the notice a child's end leaves
 * its parent, waking the parent, cascading a cancel (EXE-13), and the children features read.
 */

export const openChildren: Statement = {
  name: 'engine.open_children',
  text: `SELECT count(*)::int AS n FROM executions
            WHERE parent_id = $1 AND attached AND state NOT IN ${FINAL_STATES}`,
};

/** Locks the open attached children in ID order (a cancel takes them before its own row: waits.ts explains the order). */
export const lockOpenChildren: Statement = {
  name: 'engine.lock_open_children',
  text: `SELECT id FROM executions
            WHERE parent_id = $1 AND attached AND state NOT IN ${FINAL_STATES}
            ORDER BY id FOR NO KEY UPDATE`,
};

export const childNotice: Statement = {
  name: 'engine.child_notice',
  text: `INSERT INTO execution_child_notices (parent_id, child_id, state) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
};

export const consumeNotices: Statement = {
  name: 'engine.consume_notices',
  text: `UPDATE execution_child_notices SET consumed_at = now() WHERE parent_id = $1 AND consumed_at IS NULL RETURNING child_id, state`,
};

export const wakeParent: Statement = {
  name: 'engine.wake_parent',
  text: `UPDATE executions SET state = CASE WHEN state = 'waiting' THEN 'queued' ELSE state END, updated_at = now()
            WHERE id = $1 AND (state = 'waiting' OR (state = 'cancelling' AND lease_until IS NULL)) RETURNING id`,
};

export const cascadeCancel: Statement = {
  name: 'engine.cascade_cancel',
  text: `UPDATE executions c SET state = 'cancelling', cancel_phase = c.cancel_phase + 1, updated_at = now()
             FROM executions p
            WHERE c.parent_id = $1 AND p.id = c.id AND c.attached
              AND c.state NOT IN ('completed', 'failed', 'cancelled', 'interrupted', 'cancelling')
            RETURNING c.id, c.cancel_phase, p.state AS was`,
};

export const subtreeIds: Statement = {
  name: 'engine.subtree_ids',
  text: `WITH RECURSIVE tree(id) AS (
           SELECT id FROM executions WHERE id = $1
           UNION ALL
           SELECT e.id FROM executions e JOIN tree ON e.parent_id = tree.id
         )
         SELECT id FROM tree`,
};

export const ancestorIds: Statement = {
  name: 'engine.ancestor_ids',
  text: `WITH RECURSIVE up(id, parent_id, depth) AS (
           SELECT id, parent_id, 0 FROM executions WHERE id = $1
           UNION ALL
           SELECT e.id, e.parent_id, up.depth + 1 FROM executions e JOIN up ON e.id = up.parent_id
         )
         SELECT id FROM up WHERE depth > 0 ORDER BY depth`,
};

export const childrenFacts: Statement = {
  name: 'engine.children_facts',
  text: `SELECT ${FACTS_COLUMNS} FROM executions WHERE parent_id = $1 ORDER BY created_at, id`,
};
