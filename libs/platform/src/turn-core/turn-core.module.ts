import { Global, Module } from '@nestjs/common';
import { ApprovalGates } from './approval-gate';
import { ChatInputPort } from './chat-inputs';
import { TurnTools } from './turn-tool';

/**
 * The Turn core (decision 078): the Turn's contract, state and codecs, the tool port and the
 * approval-gate hook. Features register into it from their modules (their tool kinds into
 * TurnTools, Approvals its gate into ApprovalGates, Chats its message admission into
 * ChatInputPort); it imports no feature.
 */
@Global()
@Module({ providers: [TurnTools, ApprovalGates, ChatInputPort], exports: [TurnTools, ApprovalGates, ChatInputPort] })
export class TurnCoreModule {}
