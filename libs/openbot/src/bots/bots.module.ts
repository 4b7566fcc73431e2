import { Module } from '@nestjs/common';
import { CreateBotHandler } from './commands/create-bot.command';
import { DeleteBotHandler } from './commands/delete-bot.command';
import { UpdateBotHandler } from './commands/update-bot.command';
import { GetBotHandler } from './queries/get-bot.query';
import { ListBotsHandler } from './queries/list-bots.query';

/**
 * Bots: saving, reading and deleting Bots. Bots sits low among the features: what it needs from
 * a feature above it is asked through a query whose class lives here (DeclareAppTools, answered
 * by Apps; decision 079). It still reads approvals' tool approval policy, which the Turn's core
 * is to own.
 */
@Module({ providers: [CreateBotHandler, UpdateBotHandler, DeleteBotHandler, GetBotHandler, ListBotsHandler] })
export class BotsModule {}
