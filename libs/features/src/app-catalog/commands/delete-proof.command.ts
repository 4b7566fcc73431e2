import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { PROOF_VIEW_COLUMNS, proofNotFound, type ProofView } from '../proof-view';

/** Removes a proof. Index entries of the App stay stored but are hidden unless another verified proof remains (MIG-04). */
export class DeleteProof extends Command<ProofView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly proofId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteProof)
export class DeleteProofHandler implements ICommandHandler<DeleteProof> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId, proofId }: DeleteProof): Promise<ProofView> {
    if (!isUuid(appId) || !isUuid(proofId)) throw proofNotFound();
    const row = await this.db.one<ProofView>(`DELETE FROM app_proofs WHERE id = $1 AND app_id = $2 AND organization_id = $3 RETURNING ${PROOF_VIEW_COLUMNS}`, [proofId, appId, caller.organizationId]);
    if (row === undefined) throw proofNotFound();
    return row;
  }
}
