import { newId, type ErrorId } from '@openbot/domain';
import { codec, defineWorkflow, type Codec, type FailureRecorder, type Json } from '@openbot/engine';
import { toFailure, toolDigest, type CheckedToolList, type ListedTool, type McpFailure } from '@openbot/protocol';
import type { Database } from '../../../platform/src/database/sql';
import type { AppClient } from './app-client';
import type { ConnectionState } from './app-view';
import { discoveryWarnings, type ConnectionDiscovery } from './connection-discovery';
import { probeConnection } from './connection-probe';

/** What a check proposes, from the saved read it started with (CONN-01). */
interface Proposal {
  readonly revision: number;
  readonly generation: number;
  readonly state: ConnectionState;
  readonly era: 'legacy' | 'modern' | null;
  readonly protocolVersion: string | null;
  readonly failure: { readonly category: string; readonly reason: string; readonly errorId: string } | null;
  /** The tools listed now, when the probe succeeded. */
  readonly tools: CheckedToolList | null;
  /** Whether this differs from the saved connection (state, era, or any tool's digest). */
  readonly changed: boolean;
}

interface CheckState {
  readonly connectionId: string;
  readonly organizationId: string;
  readonly memberId: string;
  readonly proposal: Proposal | null;
}

/** A proposal as the saved state holds it: plain JSON (its fields are all JSON values). */
function proposalJson(proposal: Proposal): Json {
  return JSON.parse(JSON.stringify(proposal)) as Json;
}

/** What this workflow itself saved as a proposal: checked on the fields a proposal always has. */
function isProposal(value: unknown): value is Proposal {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.revision === 'number' && typeof v.generation === 'number' && typeof v.state === 'string' && typeof v.changed === 'boolean';
}

/** The check's saved state: the proposal is stored as JSON and read back as the Proposal it was. */
function checkStateCodec(): Codec<CheckState> {
  const base = codec.object({ connectionId: codec.string, organizationId: codec.string, memberId: codec.string, proposal: codec.nullable(codec.json) });
  return {
    encode: (value) => base.encode({ ...value, proposal: value.proposal === null ? null : proposalJson(value.proposal) }),
    decode: (json, path) => {
      const raw = base.decode(json, path);
      const proposal = raw.proposal;
      if (proposal !== null && !isProposal(proposal)) throw new Error(`${path ?? ''}.proposal is not a saved proposal`);
      return { ...raw, proposal };
    },
  };
}

export const CONNECTION_CHECK = defineWorkflow({
  name: 'app.connection.check',
  audience: 'member',
  input: codec.object({ connectionId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: checkStateCodec(),
  result: codec.json,
  calls: { probe: codec.json },
});

/**
 * A connection check (revalidation) as an execution command (CONN-01, FW-05): the phase reads the
 * connection as saved (its revision and grant generation), probes it and lists its tools — both
 * outside any transaction, under one call-log entry, so a takeover reuses what was seen — and
 * proposes the change. The end transaction applies it only when the caller is still a member of
 * the organization and the connection still has that revision and generation; then the revision
 * rises by one when anything changed, with the new tool list cached for it. The execution's
 * result stays readable after the connection is removed.
 */
export function connectionCheckWorkflow(deps: { readonly db: Database; readonly client: AppClient; readonly discovery: ConnectionDiscovery; readonly failures: FailureRecorder }) {
  return CONNECTION_CHECK.implement({
    initial: (input) => ({ ...input, proposal: null }),
    next: (state) => (state.proposal === null ? { phase: 'probe' } : { end: 'completed', result: resultOf(state) }),
    phases: {
      probe: {
        async run(context) {
          const state = context.state;
          const proposal = (await context.call('probe', { safe: true, kind: 'other' }, async () => {
            const saved = await deps.db.one<{ revision: number; generation: number; state: string; era: string | null }>(
              'SELECT revision, generation, state, era FROM app_connections WHERE id = $1 AND deleting_at IS NULL',
              [state.connectionId],
            );
            if (saved === undefined) return { gone: true };
            // The check is the caller's work: its Vault references are opened with the caller's rights.
            const actor = { kind: 'member' as const, id: state.memberId };
            const target = await deps.client.targetOf(deps.db, state.connectionId);
            const probe = target === null ? null : await probeConnection(deps.client, target, actor);
            let tools: CheckedToolList | null = null;
            let cause: McpFailure | null = probe?.failure ?? null;
            let outcome: ConnectionState = probe?.state ?? 'failed';
            if (outcome === 'ready') {
              try {
                tools = await deps.discovery.list(state.connectionId, actor);
              } catch (error) {
                outcome = 'failed';
                cause = toFailure(error, 'list');
              }
            }
            let failure: Proposal['failure'] = null;
            if (cause !== null) {
              // The sealed cause is recorded once, with this call's saved result (a takeover reuses both).
              const errorId = newId<ErrorId>();
              await deps.db.transaction((tx) => deps.failures.record(tx, { errorId, category: cause.category, origin: 'app-connection.check', cause, executionId: context.executionId }));
              failure = { category: cause.category, reason: cause.reason, errorId };
            }
            const before = await deps.discovery.cached(state.connectionId, saved.revision);
            const changed = outcome !== saved.state || (probe?.era ?? saved.era) !== saved.era || (tools !== null && before !== null && listDigest(tools.tools) !== listDigest(before.tools));
            return proposalJson({ revision: saved.revision, generation: saved.generation, state: outcome, era: probe?.era ?? null, protocolVersion: probe?.protocolVersion ?? null, failure, tools, changed });
          })) as Proposal | { gone: true };
          if ('gone' in proposal) return { state: { ...state, proposal: { revision: 0, generation: 0, state: 'failed', era: null, protocolVersion: null, failure: null, tools: null, changed: false } } };
          return { state: { ...state, proposal } };
        },
      },
    },
    async end(context) {
      const { proposal, connectionId, organizationId, memberId } = context.state;
      if (context.outcome !== 'completed' || proposal === null || proposal.revision === 0) return;
      // The caller must still be a member of the organization (CONN-01: the final transaction checks caller, revision and generation).
      // A removed member keeps its row (removed_at): it is no caller any more.
      const { rowCount: member } = await context.tx.query('SELECT 1 FROM members WHERE id = $1 AND organization_id = $2 AND removed_at IS NULL', [memberId, organizationId]);
      if (member === 0) return;
      const { rows } = await context.tx.query(
        `UPDATE app_connections SET state = $4, era = COALESCE($5, era), protocol_version = COALESCE($6, protocol_version), category = $7, error_id = $8,
                checked_at = now(), updated_at = now(), revision = revision + $9::int, warnings = COALESCE($10::jsonb, warnings)
          WHERE id = $1 AND revision = $2 AND generation = $3 AND deleting_at IS NULL RETURNING revision`,
        [
          connectionId,
          proposal.revision,
          proposal.generation,
          proposal.state,
          proposal.era,
          proposal.protocolVersion,
          proposal.failure?.category ?? null,
          proposal.failure?.errorId ?? null,
          proposal.changed ? 1 : 0,
          proposal.tools === null ? null : JSON.stringify(discoveryWarnings(proposal.tools)),
        ],
      );
      const updated = rows[0] as { revision: number } | undefined;
      if (updated !== undefined && proposal.tools !== null) {
        await context.tx.query(
          `INSERT INTO app_connection_tools (connection_id, revision, tools, refused, cut_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (connection_id, revision) DO NOTHING`,
          [connectionId, updated.revision, JSON.stringify(proposal.tools.tools), JSON.stringify(proposal.tools.refused), proposal.tools.cutAt],
        );
      }
    },
  });
}

function resultOf(state: CheckState): Json {
  const p = state.proposal!;
  if (p.revision === 0) return { connectionId: state.connectionId, state: 'deleted' };
  return { connectionId: state.connectionId, state: p.state, checkedRevision: p.revision, changed: p.changed, ...(p.failure ? { category: p.failure.category } : {}) };
}

/** One digest for a whole list: it changes when any tool is added, removed or changed. */
export function listDigest(tools: readonly ListedTool[]): string {
  return tools
    .map((t) => `${t.name}:${toolDigest(t)}`)
    .sort()
    .join(',');
}
