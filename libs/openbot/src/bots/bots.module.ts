import { Module } from '@nestjs/common';
import { CreateBotHandler } from './commands/create-bot.command';
import { DeleteBotHandler } from './commands/delete-bot.command';
import { UpdateBotHandler } from './commands/update-bot.command';
import { GetBotHandler } from './queries/get-bot.query';
import { ListBotsHandler } from './queries/list-bots.query';

@Module({ providers: [CreateBotHandler, UpdateBotHandler, DeleteBotHandler, GetBotHandler, ListBotsHandler] })
export class BotsModule {}
