import type { Statement } from './statement';

/**
 * The SQL of commands: the command key that makes a submit idempotent (EXE-02), and an operator's
 * decision on an unknown call (CALL-03).
 */

export const insertCommand: Statement = {
  name: 'engine.insert_command',
  text: `INSERT INTO execution_commands (scope_kind, scope_id, target, command_key, input_hash, execution_id)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING execution_id`,
};

export const selectCommand: Statement = {
  name: 'engine.select_command',
  text: `SELECT input_hash, execution_id FROM execution_commands
                    WHERE scope_kind = $1 AND scope_id = $2 AND target = $3 AND command_key = $4`,
};

export const decideCall: Statement = {
  name: 'engine.decide_call',
  text: `UPDATE execution_calls SET status = 'succeeded', key_id = $2, result = $3, updated_at = now() WHERE id = $1`,
};
