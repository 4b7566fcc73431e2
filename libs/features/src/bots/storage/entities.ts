import { BotEntity } from './bot.entity';

/** The bots module's entity. */
export const BOTS_ENTITIES = [BotEntity] as const;
