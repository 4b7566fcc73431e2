import { NotFound } from '@openbot/domain';

/** A proof as the API shows it. */
export interface ProofView {
  readonly id: string;
  readonly appId: string;
  readonly domain: string;
  readonly token: string;
  readonly state: 'pending' | 'verified' | 'failed';
  /** Why the last verification failed; null unless `failed` (and for proofs that failed before reasons were kept). */
  readonly failureReason: string | null;
  readonly verifiedAt: Date | null;
  readonly createdAt: Date;
}

export const PROOF_VIEW_COLUMNS = 'id, app_id AS "appId", domain, token, state, failure_reason AS "failureReason", verified_at AS "verifiedAt", created_at AS "createdAt"';

export const proofNotFound = (): NotFound => new NotFound('Proof');
