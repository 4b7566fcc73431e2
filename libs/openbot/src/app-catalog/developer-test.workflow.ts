import { codec, defineWorkflow, type Json } from '@openbot/engine';
import { toFailure, type McpConnection, type Remote } from '@openbot/protocol';
import type { Pool } from 'pg';
import type { AppClient } from '../apps/app-client';

export const DEVELOPER_TEST = defineWorkflow({
  name: 'app.developer-test',
  audience: 'member',
  input: codec.object({ testId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: codec.object({ testId: codec.string, organizationId: codec.string, memberId: codec.string, outcome: codec.nullable(codec.json) }),
  result: codec.json,
  calls: { run: codec.json },
});

interface Outcome {
  readonly connection: { readonly state: string; readonly era: string | null; readonly protocolVersion: string | null; readonly category: string | null; readonly closed: string | null };
  readonly tools: readonly string[];
}

/**
 * A developer test of an App (DEVT-01): the common workflow, with one call-log entry that opens a
 * pre-publish connection to the chosen remote as the original caller, lists its tools and closes
 * the connection before the call's result is saved, so the run ends (and its row shows an
 * outcome) only after its connection was closed. Each step is an event of the execution:
 * `developer_test.connected`, `developer_test.tools`, `developer_test.closed`.
 */
export function developerTestWorkflow(deps: { readonly pool: Pool; readonly client: AppClient }) {
  return DEVELOPER_TEST.implement({
    initial: (input) => ({ ...input, outcome: null }),
    next: (state) => (state.outcome === null ? { phase: 'run' } : { end: 'completed', result: state.outcome }),
    phases: {
      run: {
        async run(context) {
          const { testId, organizationId, memberId } = context.state;
          const outcome = (await context.call('run', { safe: true, kind: 'other' }, async () => {
            const { rows } = await deps.pool.query<{ remote: Remote }>(
              `SELECT r.remote FROM app_developer_tests t JOIN apps a ON a.id = t.app_id, jsonb_array_elements(a.remotes) r(remote) WHERE t.id = $1 AND r.remote->>'url' = t.remote`,
              [testId],
            );
            const remote = rows[0]?.remote;
            if (remote === undefined) return json({ connection: { state: 'failed', era: null, protocolVersion: null, category: 'not_found', closed: null }, tools: [] });
            let connection: McpConnection | null = null;
            try {
              connection = await deps.client.open({ organizationId, remote, variables: {}, headers: {}, secrets: { variables: {}, headers: {} } }, { actor: { kind: 'member', id: memberId }, signal: context.signal });
              const listed = await connection.listTools({ signal: context.signal });
              const opened = connection;
              connection = null;
              const closed = await opened.close();
              return json({ connection: { state: 'ready', era: opened.era, protocolVersion: opened.protocolVersion, category: null, closed: closed.kind }, tools: listed.tools.map((t) => t.name) });
            } catch (error) {
              const failure = toFailure(error, 'open');
              if (connection !== null) await connection.close().catch(() => undefined);
              return json({ connection: { state: failure.reason === 'needs_authorization' ? 'needs_authorization' : 'failed', era: null, protocolVersion: null, category: failure.category, closed: null }, tools: [] });
            }
          })) as Json;
          if (!isOutcome(outcome)) throw new Error('developer test: the saved call result is not an outcome');
          context.emit('developer_test.connected', { testId, ...outcome.connection });
          context.emit('developer_test.tools', { testId, tools: [...outcome.tools] });
          context.emit('developer_test.closed', { testId, closed: outcome.connection.closed });
          return { state: { ...context.state, outcome: json(outcome) } };
        },
      },
    },
    async end(context) {
      const { testId, outcome } = context.state;
      const saved = isOutcome(outcome) ? outcome : null;
      await context.tx.query(`UPDATE app_developer_tests SET state = $2, connection = $3::jsonb, tools = $4::jsonb WHERE id = $1`, [
        testId,
        context.outcome === 'completed' && saved !== null && saved.connection.state === 'ready' ? 'completed' : 'failed',
        saved === null ? null : JSON.stringify(saved.connection),
        saved === null ? null : JSON.stringify(saved.tools),
      ]);
    },
  });
}

/** What this workflow's call saved: checked on the fields an outcome always has. */
function isOutcome(value: unknown): value is Outcome {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.connection === 'object' && v.connection !== null && typeof (v.connection as Record<string, unknown>).state === 'string' && Array.isArray(v.tools);
}

function json(value: unknown): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}
