import { closeSession, isMcpFailure } from '@openbot/protocol';
import { codec, defineWorkflow, type Codec, type Json } from '@openbot/engine';
import type { Sql } from '../../../platform/src/database/sql';
import type { SendActor } from '../../../platform/src/vaults/vault-secrets';
import type { AppClient, ConnectionTarget } from './app-client';
import type { ConnectionGrants } from './connection-grants';

interface CleanupState {
  readonly connectionId: string;
  /** The member who deleted it: the cleanup's DELETEs open its Vault references with that member's rights. */
  readonly memberId?: string;
  readonly closed: boolean;
  /** Rounds of closing so far: each round's close of a scope is its own call (a failed one is tried again next round). */
  readonly round: number;
}

export const CONNECTION_CLEANUP = defineWorkflow({
  name: 'app.connection.cleanup',
  audience: 'member',
  input: codec.object({ connectionId: codec.string, memberId: codec.optional(codec.string) }),
  state: codec.object({ connectionId: codec.string, memberId: codec.optional(codec.string), closed: codec.boolean, round: codec.number }) satisfies Codec<CleanupState>,
  calls: { close: codec.json },
});

/** How long the cleanup waits before looking at the scopes again (a live scope's owner closes it on its own). */
const RECHECK_MS = 2_000;

/**
 * Cleanup of a deleted connection (RES-07): admission closed when the delete was accepted. It
 * waits for every physical scope of the connection, old scopes whose route was replaced
 * included: a scope whose lease is still running belongs to its owner, which closes it with its
 * phase; a scope whose lease ran out is closed here, with `DELETE` for a legacy session (404 and
 * 405 count as closed; 401 and 403, with the connection's current grant token, as refused: final).
 * The DELETE carries the connection's OAuth grant token like its calls, refreshed through the
 * same path: the grant stays on the deleting connection until this execution's end hands it to
 * cleanup. Each close result is stored on its scope row. A DELETE that fails otherwise leaves
 * the scope open and is tried again: a missing answer does not prove release (RES-06). The rows
 * and the grant go in the end transaction.
 */
export function connectionCleanupWorkflow(deps: { readonly db: Sql; readonly client: AppClient; readonly grants: ConnectionGrants }) {
  return CONNECTION_CLEANUP.implement({
    initial: (input) => ({ connectionId: input.connectionId, ...(input.memberId === undefined ? {} : { memberId: input.memberId }), closed: false, round: 0 }),
    next: (state) => (state.closed ? { end: 'completed' } : { phase: 'close' }),
    phases: {
      close: {
        async run(context) {
          const state = context.state;
          const rows = await deps.db.rows<{ id: string; url: string; era: string; session_id: string | null; protocol_version: string | null; expired: boolean }>(
            `SELECT s.id, s.url, s.era, s.session_id, c.protocol_version, s.lease_until < now() AS expired
               FROM app_connection_scopes s JOIN app_connections c ON c.id = s.connection_id
              WHERE s.connection_id = $1 AND s.close_result IS NULL`,
            [state.connectionId],
          );
          if (rows.length === 0) return { state: { ...state, closed: true } };
          const target = await deps.client.targetOfAny(deps.db, state.connectionId);
          const actor = state.memberId === undefined ? null : { kind: 'member' as const, id: state.memberId };
          for (const scope of rows.filter((r) => r.expired)) {
            const result = await context.call(`close:${scope.id}:${state.round}`, { safe: true, kind: 'other' }, async (): Promise<Json> => {
              if (scope.era === 'modern' || scope.session_id === null) return { kind: 'local' };
              try {
                // The DELETE carries the connection's grant token like its calls (the grant is handed to cleanup only at this execution's end).
                const fetch = deps.client.fetchOf(state.connectionId);
                return { ...(await closeSession({ url: scope.url, sessionId: scope.session_id, protocolVersion: scope.protocol_version, fetch, headers: () => sessionHeaders(deps.client, target, actor, scope.url) })) } as Json;
              } catch (error) {
                // Not proven released: stays open; the next run tries again.
                if (isMcpFailure(error)) return { kind: 'failed', reason: error.reason };
                throw error;
              }
            });
            if ((result as { kind: string }).kind !== 'failed') {
              await deps.db.count('UPDATE app_connection_scopes SET closed_at = now(), close_result = $2 WHERE id = $1 AND close_result IS NULL', [scope.id, JSON.stringify(result)]);
            }
          }
          return { state: { ...state, round: state.round + 1 }, wait: { until: new Date(context.clock.now() + RECHECK_MS) } };
        },
      },
    },
    async end(context) {
      if (context.outcome !== 'completed') return;
      // Its OAuth grant, kept for the DELETEs above, goes to service cleanup in this transaction (GRANT-03, GRANT-05).
      await deps.grants.handOver(context.tx, { submit: (command) => context.submit(command) }, context.state.connectionId, 'removed');
      const { rows } = await context.tx.query('DELETE FROM app_connections WHERE id = $1 RETURNING secrets_record_id', [context.state.connectionId]);
      const secrets = (rows[0] as { secrets_record_id: string | null } | undefined)?.secrets_record_id;
      if (secrets) await context.tx.query('DELETE FROM sealed_records WHERE id = $1', [secrets]);
    },
  });
}

/** The connection's headers for a cleanup DELETE, resolved as for its calls; one that cannot be resolved is left out (the server may still end the session). */
async function sessionHeaders(client: AppClient, target: ConnectionTarget | null, actor: SendActor | null, url: string): Promise<Record<string, string>> {
  if (target === null) return {};
  const out: Record<string, string> = {};
  for (const name of Object.keys(target.headers)) {
    try {
      Object.assign(out, await client.headersOf({ ...target, headers: { [name]: target.headers[name] ?? null } }, actor, url));
    } catch {
      // left out
    }
  }
  return out;
}
