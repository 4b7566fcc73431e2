import { codec, defineWorkflow, type Codec, type Json } from '@openbot/engine';
import { McpAnswerTooLarge, type Fetch } from '@openbot/protocol';
import type { Sql } from '../../../platform/src/database/sql';

/** Where a domain serves its proof token. */
export const PROOF_PATH = '/.well-known/openbot-app-proof';

/** What one fetch of the proof found: `verified`, `failed` with why, or `deleted` (the proof is gone). */
export interface ProofCheck {
  readonly outcome: string;
  readonly reason: string | null;
}

const proofCheckObject = codec.object({ outcome: codec.string, reason: codec.nullable(codec.string) });

/** A saved fetch result: `{ outcome, reason }`, or the bare outcome string saved before reasons were kept. */
const proofCheckCodec: Codec<ProofCheck> = {
  encode: (check) => proofCheckObject.encode(check),
  decode: (json: Json, path?: string) => (typeof json === 'string' ? { outcome: json, reason: null } : proofCheckObject.decode(json, path)),
};

export const PROOF_VERIFY = defineWorkflow({
  name: 'app.proof.verify',
  audience: 'member',
  input: codec.object({ proofId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: codec.object({
    proofId: codec.string,
    organizationId: codec.string,
    memberId: codec.string,
    outcome: codec.nullable(codec.string),
    reason: codec.optional(codec.nullable(codec.string)),
  }),
  result: codec.json,
  calls: { fetch: proofCheckCodec },
});

/**
 * Verifies a proof (DEVT-01): one call-log entry fetches `https://<domain>/.well-known/openbot-app-proof`
 * through the egress client (pinned, byte-capped), outside any transaction; the answer must be the
 * proof's token (surrounding whitespace ignored). The end transaction sets the proof `verified` or
 * `failed` with why (`failure_reason`, a fixed phrase that never repeats the domain's answer), only
 * while the proof still exists with the same token and the caller is still a member.
 */
export function proofVerifyWorkflow(deps: { readonly db: Sql; readonly fetch: Fetch }) {
  return PROOF_VERIFY.implement({
    initial: (input) => ({ ...input, outcome: null }),
    next: (state) =>
      state.outcome === null ? { phase: 'fetch' } : { end: 'completed', result: { proofId: state.proofId, state: state.outcome, failureReason: state.reason ?? null } },
    phases: {
      fetch: {
        async run(context) {
          const check = await context.call('fetch', { safe: true, kind: 'other' }, async (): Promise<ProofCheck> => {
            const proof = await deps.db.one<{ domain: string; token: string }>('SELECT domain, token FROM app_proofs WHERE id = $1', [context.state.proofId]);
            if (proof === undefined) return { outcome: 'deleted', reason: null };
            try {
              const response = await deps.fetch(`https://${proof.domain}${PROOF_PATH}`, { headers: { accept: 'text/plain' } });
              if (response.status !== 200) return failed(`the domain answered HTTP ${response.status} at ${PROOF_PATH}`);
              return (await response.text()).trim() === proof.token ? { outcome: 'verified', reason: null } : failed(`the answer at ${PROOF_PATH} is not the proof's token`);
            } catch (error) {
              return failed(unreachableReason(error));
            }
          });
          return { state: { ...context.state, outcome: check.outcome, reason: check.reason } };
        },
      },
    },
    async end(context) {
      const { proofId, organizationId, memberId, outcome, reason } = context.state;
      if (context.outcome !== 'completed' || (outcome !== 'verified' && outcome !== 'failed')) return;
      const { rowCount: member } = await context.tx.query('SELECT 1 FROM members WHERE id = $1 AND organization_id = $2 AND removed_at IS NULL', [memberId, organizationId]);
      if (member === 0) return;
      await context.tx.query(
        `UPDATE app_proofs SET state = $2, failure_reason = CASE WHEN $2 = 'failed' THEN $3 ELSE NULL END, verified_at = CASE WHEN $2 = 'verified' THEN now() ELSE NULL END WHERE id = $1`,
        [proofId, outcome, reason ?? null],
      );
    },
  });
}

const failed = (reason: string): ProofCheck => ({ outcome: 'failed', reason });

/** TLS failures Node reports by these codes: the domain's certificate is not trusted. */
const UNTRUSTED_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO|HOSTNAME/;
/** Any other TLS failure (no TLS spoken there, a protocol mismatch). */
const TLS_FAILURE = /ERR_SSL|ERR_TLS|EPROTO/;

/**
 * Why the proof could not be read, as a fixed phrase: the egress policy's refusal says the host and
 * the policy's reason, the same for every refused destination (decision 074); everything else
 * names only the kind of failure, never an address or the error's own text.
 */
function unreachableReason(error: unknown): string {
  if (error instanceof Error && error.name === 'EgressRefused') return `the egress policy refused it: ${error.message}`;
  if (error instanceof McpAnswerTooLarge) return `the answer at ${PROOF_PATH} is larger than ${error.limitBytes} bytes`;
  const code = errorCode(error);
  if (code !== null && UNTRUSTED_CERTIFICATE.test(code)) return "the domain's TLS certificate is not trusted";
  if (code !== null && TLS_FAILURE.test(code)) return 'the TLS handshake with the domain failed';
  if (code === 'ECONNREFUSED') return 'the domain refused the connection';
  if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'the domain did not answer in time';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the domain closed the connection';
  return 'the domain could not be reached';
}

/** The error's `code`, or its cause's (undici's fetch wraps the socket error in a TypeError). */
function errorCode(error: unknown): string | null {
  for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 4; at = (at as { cause?: unknown }).cause, depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return null;
}
