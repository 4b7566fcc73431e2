import { MemoryCursorEntity } from './memory-cursor.entity';
import { MemoryItemEntity } from './memory-item.entity';
import { MemoryPermitEntity } from './memory-permit.entity';

/** Bot memory's entities: items, learning cursors and helper-call permits. */
export const MEMORY_ENTITIES = [MemoryItemEntity, MemoryCursorEntity, MemoryPermitEntity] as const;
