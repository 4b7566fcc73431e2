import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type { MemberCaller, Page, PageRequest } from '@openbot/domain';
import { MemoryStore } from '../memory-store';
import { normalizeTags, type MemoryItemView } from '../memory-view';

/** A page of a Bot's memory items, oldest first, without content: `tags` all named, `q` every whole word. */
export class ListMemoryItems extends Query<Page<MemoryItemView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly botId: string,
    readonly filter: { readonly tags: readonly string[]; readonly q: string | null },
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListMemoryItems)
export class ListMemoryItemsHandler implements IQueryHandler<ListMemoryItems> {
  constructor(@Inject(MemoryStore) private readonly memory: MemoryStore) {}

  execute({ caller, botId, filter, page }: ListMemoryItems): Promise<Page<MemoryItemView>> {
    return this.memory.list(caller, botId, { tags: normalizeTags(filter.tags, 'tag'), q: filter.q }, page);
  }
}
