/**
 * Node presence (docs/decisions/026-dead-node-detection.md): every node holds a session-level
 * shared advisory lock keyed by its node ID on a connection of its own. PostgreSQL drops it the
 * moment that connection closes (the process died, its host went away), so peers see a dead
 * owner within a poll, long before its lease runs out.
 */

/** The advisory lock namespace of node presence (the first of the two int4 keys). */
export const PRESENCE_LOCK_CLASS = 0x4f42_0001;

export const holdPresence = {
  name: 'engine.presence_hold',
  text: 'SELECT pg_advisory_lock_shared($1::int4, hashtext($2))',
} as const;

/** True while some session holds the presence lock of node $1 in this database. */
export const nodePresent = {
  name: 'engine.presence_of',
  text: `SELECT EXISTS (
           SELECT 1 FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid = $2::int4::oid AND l.objid = hashtext($1)::oid
         ) AS present`,
} as const;

/**
 * Leased live executions whose owner (another node) holds no presence lock: candidates for a
 * takeover once their owner stays absent past the grace period.
 */
export const ownedByAbsentNodes = {
  name: 'engine.presence_orphans',
  text: `WITH present AS (
           SELECT l.objid FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = $2::int4::oid
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         )
         SELECT e.id, e.owner_node FROM executions e
          WHERE e.lease_until IS NOT NULL AND e.lease_until > now() AND e.owner_node IS NOT NULL AND e.owner_node <> $1
            AND e.state IN ('queued', 'running', 'cancelling')
            AND hashtext(e.owner_node)::oid NOT IN (SELECT objid FROM present)
          LIMIT $3`,
} as const;
