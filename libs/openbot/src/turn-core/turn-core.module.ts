import { Global, Module } from '@nestjs/common';
import { ApprovalGates } from './approval-gate';
import { TurnTools } from './turn-tool';

/**
 * The Turn core (decision 078): the Turn's contract, state and codecs, the tool port and the
 * approval-gate hook. Features register into it from their modules (their tool kinds into
 * TurnTools, Approvals its gate into ApprovalGates); it imports no feature.
 */
@Global()
@Module({ providers: [TurnTools, ApprovalGates], exports: [TurnTools, ApprovalGates] })
export class TurnCoreModule {}
