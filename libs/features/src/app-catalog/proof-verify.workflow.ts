import { codec, defineWorkflow } from '@openbot/engine';
import type { Fetch } from '@openbot/protocol';
import type { Sql } from '../../../platform/src/database/sql';

/** Where a domain serves its proof token. */
export const PROOF_PATH = '/.well-known/openbot-app-proof';

export const PROOF_VERIFY = defineWorkflow({
  name: 'app.proof.verify',
  audience: 'member',
  input: codec.object({ proofId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: codec.object({ proofId: codec.string, organizationId: codec.string, memberId: codec.string, outcome: codec.nullable(codec.string) }),
  result: codec.json,
  calls: { fetch: codec.string },
});

/**
 * Verifies a proof (DEVT-01): one call-log entry fetches `https://<domain>/.well-known/openbot-app-proof`
 * through the egress client (pinned, byte-capped), outside any transaction; the answer must be the
 * proof's token (surrounding whitespace ignored). The end transaction sets the proof `verified` or
 * `failed`, only while the proof still exists with the same token and the caller is still a member.
 */
export function proofVerifyWorkflow(deps: { readonly db: Sql; readonly fetch: Fetch }) {
  return PROOF_VERIFY.implement({
    initial: (input) => ({ ...input, outcome: null }),
    next: (state) => (state.outcome === null ? { phase: 'fetch' } : { end: 'completed', result: { proofId: state.proofId, state: state.outcome } }),
    phases: {
      fetch: {
        async run(context) {
          const outcome = await context.call('fetch', { safe: true, kind: 'other' }, async () => {
            const proof = await deps.db.one<{ domain: string; token: string }>('SELECT domain, token FROM app_proofs WHERE id = $1', [context.state.proofId]);
            if (proof === undefined) return 'deleted';
            try {
              const response = await deps.fetch(`https://${proof.domain}${PROOF_PATH}`, { headers: { accept: 'text/plain' } });
              if (response.status !== 200) return 'failed';
              return (await response.text()).trim() === proof.token ? 'verified' : 'failed';
            } catch {
              // Unreachable, refused by the egress policy, an untrusted certificate, or an answer over the cap.
              return 'failed';
            }
          });
          return { state: { ...context.state, outcome } };
        },
      },
    },
    async end(context) {
      const { proofId, organizationId, memberId, outcome } = context.state;
      if (context.outcome !== 'completed' || (outcome !== 'verified' && outcome !== 'failed')) return;
      const { rowCount: member } = await context.tx.query('SELECT 1 FROM members WHERE id = $1 AND organization_id = $2', [memberId, organizationId]);
      if (member === 0) return;
      await context.tx.query(`UPDATE app_proofs SET state = $2, verified_at = CASE WHEN $2 = 'verified' THEN now() ELSE NULL END WHERE id = $1`, [proofId, outcome]);
    },
  });
}
