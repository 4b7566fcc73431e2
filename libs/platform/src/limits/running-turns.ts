import type { Queryable } from '@openbot/engine';

/**
 * The organization's running Turns (tasks' Turns included), through the index of open Turns: what
 * the limit `runningTurns` counts (decision 076), read by the Turn's admission and by the limits'
 * own reading. It lives with the limits, so the platform never imports the Chats feature.
 */
export async function runningTurnsOf(db: Queryable, organizationId: string): Promise<number> {
  const { rows } = await db.query<{ running: number }>({
    name: 'chats.count_running_turns',
    text: `SELECT count(*)::int AS running FROM chat_turns t JOIN chats c ON c.id = t.chat_id
            WHERE c.organization_id = $1 AND t.state = 'running'`,
    values: [organizationId],
  });
  return rows[0]!.running;
}
