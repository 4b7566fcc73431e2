import { Query } from '@nestjs/cqrs';
import type { MemberCaller } from '@openbot/domain';
import type { BotTool } from '../bot-view';

/**
 * The declarations of a Bot's App tools, asked of the Apps feature when a Bot is saved (STC-07,
 * STC-12): each `app` entry comes back with its tools declared from the connection's discovery,
 * the other entries as they are; an unusable connection or an unknown tool is an InvalidInput on
 * its path. Apps sits above bots and handles it (apps/queries/declare-app-tools.handler.ts), so
 * bots never imports apps (decision 079).
 */
export class DeclareAppTools extends Query<BotTool[]> {
  constructor(
    readonly caller: MemberCaller,
    readonly tools: readonly BotTool[],
  ) {
    super();
  }
}
