import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { newId, type MemberCaller } from '@openbot/domain';
import { isMcpFailure } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { AppClient } from '../app-client';
import { unreadableAppUrl } from '../app-failures';
import { APP_VIEW_COLUMNS, type AppView } from '../app-view';

/**
 * Registers an App from its URL, read once through the egress client: an MCP Server Card, or a
 * Streamable HTTP endpoint without one (a single bare remote). A broken card, a refused or
 * unreachable URL is a 400 on `url`; nothing is stored from a guess.
 */
export class RegisterApp extends Command<AppView> {
  constructor(
    readonly caller: MemberCaller,
    readonly url: string,
  ) {
    super();
  }
}

@CommandHandler(RegisterApp)
export class RegisterAppHandler implements ICommandHandler<RegisterApp> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
  ) {}

  async execute({ caller, url }: RegisterApp): Promise<AppView> {
    let found;
    try {
      found = await this.client.discover(url, AbortSignal.timeout(15_000));
    } catch (error) {
      if (isMcpFailure(error)) throw unreadableAppUrl(error);
      throw error;
    }
    const card = found.serverCard;
    const row = await this.db.one<AppView>(
      `INSERT INTO apps (id, organization_id, url, name, title, description, version, card, remotes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${APP_VIEW_COLUMNS}`,
      [newId(), caller.organizationId, url, card.name, card.title, card.description, card.version, found.card, JSON.stringify(card.remotes)],
    );
    return row!;
  }
}
