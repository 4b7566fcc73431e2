import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { appNotFound } from '../../apps/app-failures';
import { Database } from '../../../../platform/src/database/sql';
import { PROOF_VIEW_COLUMNS, type ProofView } from '../proof-view';

/** At most this many proofs are listed per App (a domain needs one; a few stay while one is replaced). */
export const PROOFS_LISTED = 100;

/** The proofs of one App of the organization, newest first (another organization's App answers 404). */
export class ListProofs extends Query<readonly ProofView[]> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
  ) {
    super();
  }
}

@QueryHandler(ListProofs)
export class ListProofsHandler implements IQueryHandler<ListProofs> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId }: ListProofs): Promise<readonly ProofView[]> {
    if (!isUuid(appId)) throw appNotFound();
    const app = await this.db.one('SELECT 1 FROM apps WHERE id = $1 AND organization_id = $2', [appId, caller.organizationId]);
    if (app === undefined) throw appNotFound();
    return this.db.rows<ProofView>(`SELECT ${PROOF_VIEW_COLUMNS} FROM app_proofs WHERE app_id = $1 AND organization_id = $2 ORDER BY created_at DESC, id LIMIT ${PROOFS_LISTED}`, [appId, caller.organizationId]);
  }
}
