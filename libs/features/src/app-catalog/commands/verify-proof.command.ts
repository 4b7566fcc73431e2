import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { proofNotFound } from '../proof-view';
import { PROOF_VERIFY } from '../proof-verify.workflow';

/** Verifies a proof as an execution command: the answer is its execution ID; the proof's `state` shows the outcome. */
export class VerifyProof extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly proofId: string,
  ) {
    super();
  }
}

@CommandHandler(VerifyProof)
export class VerifyProofHandler implements ICommandHandler<VerifyProof> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, appId, proofId }: VerifyProof): Promise<{ executionId: string }> {
    if (!isUuid(appId) || !isUuid(proofId)) throw proofNotFound();
    const executionId = await this.db.transaction(async (tx) => {
      const proof = await tx.one('SELECT 1 FROM app_proofs WHERE id = $1 AND app_id = $2 AND organization_id = $3 FOR SHARE', [proofId, appId, caller.organizationId]);
      if (proof === undefined) throw proofNotFound();
      return this.engine.in(tx).submit({
        ...PROOF_VERIFY.command({ proofId, organizationId: caller.organizationId, memberId: caller.memberId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'app-proof', id: proofId },
      });
    });
    return { executionId };
  }
}
