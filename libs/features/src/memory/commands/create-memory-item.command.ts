import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { MemoryStore } from '../memory-store';
import { checkAccess, checkSources, normalizeTags, type MemoryAccess, type MemoryItemView, type MemorySource } from '../memory-view';

/** Adds an item to a Bot's memory: its content sealed, its words indexed by keyed hashes only. */
export class CreateMemoryItem extends Command<MemoryItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
    readonly content: string,
    readonly tags: readonly string[],
    readonly access: MemoryAccess,
    readonly sources: readonly MemorySource[],
  ) {
    super();
  }
}

@CommandHandler(CreateMemoryItem)
export class CreateMemoryItemHandler implements ICommandHandler<CreateMemoryItem> {
  constructor(@Inject(MemoryStore) private readonly memory: MemoryStore) {}

  execute({ caller, botId, content, tags, access, sources }: CreateMemoryItem): Promise<MemoryItemView> {
    return this.memory.create(caller, botId, { content, tags: normalizeTags(tags), access: checkAccess(access), sources: checkSources(sources) });
  }
}
