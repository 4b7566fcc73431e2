import { MemoryCursorEntity } from './memory-cursor.entity';
import { MemoryItemEntity } from './memory-item.entity';
import { MemoryPermitEntity } from './memory-permit.entity';
import { MemoryWordEntity } from './memory-word.entity';

/** Bot memory's entities: items, their keyed word index, learning cursors and helper-call permits. */
export const MEMORY_ENTITIES = [MemoryItemEntity, MemoryWordEntity, MemoryCursorEntity, MemoryPermitEntity] as const;
