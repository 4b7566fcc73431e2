import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { MemoryStore } from '../memory-store';
import { normalizeTags, type MemoryItemView, type MemoryStatus } from '../memory-view';

/** Changes an item's tags or status; its sealed content stays byte-identical (MEM-03). */
export class UpdateMemoryItem extends Command<MemoryItemView> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
    readonly id: string,
    readonly changes: { readonly tags?: readonly string[]; readonly status?: MemoryStatus },
  ) {
    super();
  }
}

@CommandHandler(UpdateMemoryItem)
export class UpdateMemoryItemHandler implements ICommandHandler<UpdateMemoryItem> {
  constructor(@Inject(MemoryStore) private readonly memory: MemoryStore) {}

  execute({ caller, botId, id, changes }: UpdateMemoryItem): Promise<MemoryItemView> {
    return this.memory.update(caller, botId, id, { ...(changes.tags === undefined ? {} : { tags: normalizeTags(changes.tags) }), ...(changes.status === undefined ? {} : { status: changes.status }) });
  }
}
