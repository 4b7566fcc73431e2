import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { MemoryStore } from '../memory-store';
import type { MemoryItemView } from '../memory-view';

/** Deletes one item of a Bot's memory and answers it (without content). */
export class DeleteMemoryItem extends Command<MemoryItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
    readonly id: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteMemoryItem)
export class DeleteMemoryItemHandler implements ICommandHandler<DeleteMemoryItem> {
  constructor(@Inject(MemoryStore) private readonly memory: MemoryStore) {}

  execute({ caller, botId, id }: DeleteMemoryItem): Promise<MemoryItemView> {
    return this.memory.delete(caller, botId, id);
  }
}
