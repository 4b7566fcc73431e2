import { Inject, Injectable } from '@nestjs/common';
import { Engine, type Queryable } from '@openbot/engine';
import type { AdmittedInput, ChatInputs, InputToAdmit } from '../turn-core/chat-inputs';
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

  admit(tx: Queryable, input: InputToAdmit): Promise<AdmittedInput> {
    return admitInput(tx, this.engine, input);
  }
}
