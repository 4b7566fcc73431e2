import { Injectable } from '@nestjs/common';
import type { Json } from '@openbot/engine';
import type { DefaultPrice, OrganizationLimits } from '../config/config';
import type { TransactionSql } from '../database/sql';

export type Admission = 'started' | 'queued' | 'steered';

export interface MessageAdmission {
  readonly messageId: string;
  readonly turnId: string;
  readonly executionId: string;
  readonly admission: Admission;
}

/** The limits a member's input is admitted under (decision 076). */
export type TurnAdmissionLimits = Pick<OrganizationLimits, 'queuedTurnsPerChat' | 'runningTurns'>;

/** One input to admit into a Chat: a member's message, or a reminder posting in the name of the Turn's caller. */
export interface InputToAdmit {
  readonly chatId: string;
  readonly organizationId: string;
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string };
  /** The identity of a Turn it starts, from the Chat's Bot. */
  readonly identity: (botId: string) => Json;
  readonly content: string;
  /** Files the message carries to the model; absent: none. */
  readonly fileIds?: readonly string[];
  /** `reminder` for a reminder's message; null for a caller's own input. */
  readonly author: 'reminder' | null;
  readonly commandKey: string | null;
  /** The operator's default price (OPENBOT_DEFAULT_PRICE): under credits it prices a model the platform has not (decision 072). */
  readonly defaultPrice: DefaultPrice | null;
  /** The organization limits a new Turn is admitted under (decision 076); absent: a reminder's post, which they do not hold back. */
  readonly limits?: TurnAdmissionLimits;
}

/**
 * How an input is admitted into a Chat (the Chats feature's MessageAdmissions), in the caller's
 * transaction: a Turn it starts runs once that transaction committed (decision 077).
 */
export interface ChatInputs {
  admit(tx: TransactionSql, input: InputToAdmit): Promise<MessageAdmission>;
}

/**
 * The port through which features below Chats admit a message into a Chat (a reminder's post,
 * decision 078): the Chats feature registers its MessageAdmissions here from its module.
 */
@Injectable()
export class ChatInputPort implements ChatInputs {
  private inputs: ChatInputs | null = null;

  register(inputs: ChatInputs): void {
    if (this.inputs !== null) throw new Error('chat inputs are registered twice');
    this.inputs = inputs;
  }

  admit(tx: TransactionSql, input: InputToAdmit): Promise<MessageAdmission> {
    if (this.inputs === null) throw new Error('no feature registered chat inputs');
    return this.inputs.admit(tx, input);
  }
}
