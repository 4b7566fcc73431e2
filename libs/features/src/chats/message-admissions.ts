import { Inject, Injectable } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import type { TransactionSql } from '../../../platform/src/database/sql';
import type { ChatInputs, InputToAdmit, MessageAdmission } from '../../../platform/src/turn-core/chat-inputs';
import { admitInput } from './commands/post-message.command';

/**
 * Message admission, the Chats feature's service (decision 078): one input admitted into a Chat
 * in the caller's transaction — it starts, steers or queues a Turn (see PostMessage). Features
 * below Chats (a reminder's post) reach it through the Turn core's ChatInputPort, where the
 * Chats module registers it.
 */
@Injectable()
export class MessageAdmissions implements ChatInputs {
  constructor(@Inject(Engine) private readonly engine: Engine) {}

  admit(tx: TransactionSql, input: InputToAdmit): Promise<MessageAdmission> {
    return admitInput(tx, this.engine, input);
  }
}
