import type { MemoryLearnAccess } from '../../../platform/src/turn-core/tool-spec';

// Who reads what a Turn taught is part of a saved tool's shape (turn-core/tool-spec.ts).
export { MEMORY_LEARN_ACCESS, type MemoryLearnAccess } from '../../../platform/src/turn-core/tool-spec';

/** A Bot's memory switches: Turns select context from it (`enabled`) and learn into it after they end (`learn`, stored for `learnAccess`). */
export interface BotMemorySettings {
  readonly enabled: boolean;
  readonly learn: boolean;
  /** Absent in Bots saved before it existed: read as `member`. */
  readonly learnAccess?: MemoryLearnAccess;
}

export const DEFAULT_BOT_MEMORY: BotMemorySettings = { enabled: false, learn: false, learnAccess: 'member' };
