import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { PROOF_VIEW_COLUMNS, proofNotFound, type ProofView } from '../proof-view';

/** One proof of an App of the organization (another organization's answers 404). */
export class GetProof extends Query<ProofView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly proofId: string,
  ) {
    super();
  }
}

@QueryHandler(GetProof)
export class GetProofHandler implements IQueryHandler<GetProof> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId, proofId }: GetProof): Promise<ProofView> {
    if (!isUuid(appId) || !isUuid(proofId)) throw proofNotFound();
    const row = await this.db.one<ProofView>(`SELECT ${PROOF_VIEW_COLUMNS} FROM app_proofs WHERE id = $1 AND app_id = $2 AND organization_id = $3`, [proofId, appId, caller.organizationId]);
    if (row === undefined) throw proofNotFound();
    return row;
  }
}
