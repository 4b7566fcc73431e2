import { Module } from '@nestjs/common';
import { AppsModule } from '../apps/apps.module';
import { AppToolDeclarer } from './app-tools';
import { CreateBotHandler } from './commands/create-bot.command';
import { DeleteBotHandler } from './commands/delete-bot.command';
import { UpdateBotHandler } from './commands/update-bot.command';
import { GetBotHandler } from './queries/get-bot.query';
import { ListBotsHandler } from './queries/list-bots.query';

@Module({ imports: [AppsModule], providers: [AppToolDeclarer, CreateBotHandler, UpdateBotHandler, DeleteBotHandler, GetBotHandler, ListBotsHandler] })
export class BotsModule {}
