import { Query } from '@nestjs/cqrs';

/**
 * Whether a failed delete of a Bot was refused because Chats still name it (the foreign key is
 * checked in the delete's own statement, so a Chat created concurrently counts too). Asked by
 * DeleteBot and answered by the Chats feature, which owns that key: Bots sit below Chats and
 * never import them (decision 078).
 */
export class BotKeptByChats extends Query<boolean> {
  constructor(readonly failure: unknown) {
    super();
  }
}
