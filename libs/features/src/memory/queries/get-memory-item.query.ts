import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import { MemoryStore } from '../memory-store';
import type { MemoryItemWithContent } from '../memory-view';

/** One memory item with its content, for members its access rule admits (and owners and admins). */
export class GetMemoryItem extends Query<MemoryItemWithContent> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(GetMemoryItem)
export class GetMemoryItemHandler implements IQueryHandler<GetMemoryItem> {
  constructor(@Inject(MemoryStore) private readonly memory: MemoryStore) {}

  execute({ caller, botId, id }: GetMemoryItem): Promise<MemoryItemWithContent> {
    return this.memory.get(caller, botId, id);
  }
}
