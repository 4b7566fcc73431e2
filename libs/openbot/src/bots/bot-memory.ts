/**
 * Who reads what a Turn taught: `member` (the default) stores learned items for the Turn's member
 * alone (`{ kind: 'members', ids: [member] }`); `bot` for every Turn of the Bot, where nothing the
 * Turn read was narrower (see the learner).
 */
export const MEMORY_LEARN_ACCESS = ['member', 'bot'] as const;
export type MemoryLearnAccess = (typeof MEMORY_LEARN_ACCESS)[number];

/** A Bot's memory switches: Turns select context from it (`enabled`) and learn into it after they end (`learn`, stored for `learnAccess`). */
export interface BotMemorySettings {
  readonly enabled: boolean;
  readonly learn: boolean;
  /** Absent in Bots saved before it existed: read as `member`. */
  readonly learnAccess?: MemoryLearnAccess;
}

export const DEFAULT_BOT_MEMORY: BotMemorySettings = { enabled: false, learn: false, learnAccess: 'member' };
