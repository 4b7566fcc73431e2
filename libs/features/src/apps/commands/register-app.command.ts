import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { newId, type MemberCaller } from '@openbot/domain';
import { isMcpFailure } from '@openbot/protocol';
import { Database, type Sql } from '../../../../platform/src/database/sql';
import { AppClient } from '../app-client';
import { AppExists, unreadableAppUrl } from '../app-failures';
import { APP_VIEW_COLUMNS, type AppView } from '../app-view';

/**
 * Registers an App from its URL, read once through the egress client: an MCP Server Card, or a
 * Streamable HTTP endpoint without one (a single bare remote). A broken card, a refused or
 * unreachable URL is a 400 on `url`; nothing is stored from a guess. A URL the organization
 * already registered (the same text) is 409 AppExists naming that App, checked again under a
 * per-URL lock in the insert's transaction so two concurrent registrations make one App.
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
    // A URL already registered is refused before it is read.
    await refuseRegistered(this.db, caller.organizationId, url);
    let found;
    try {
      found = await this.client.discover(url, AbortSignal.timeout(15_000));
    } catch (error) {
      if (isMcpFailure(error)) throw unreadableAppUrl(error);
      throw error;
    }
    const card = found.serverCard;
    return this.db.transaction(async (tx) => {
      // Two registrations of one URL take turns on this lock, so the second sees the first's row and is refused.
      await tx.count(`SELECT pg_advisory_xact_lock(hashtextextended('app-url:' || $1 || ':' || $2, 0))`, [caller.organizationId, url]);
      await refuseRegistered(tx, caller.organizationId, url);
      const row = await tx.one<AppView>(
        `INSERT INTO apps (id, organization_id, url, name, title, description, version, card, remotes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${APP_VIEW_COLUMNS}`,
        [newId(), caller.organizationId, url, card.name, card.title, card.description, card.version, found.card, JSON.stringify(card.remotes)],
      );
      return row!;
    });
  }
}

/** 409 AppExists naming the organization's App of this exact URL, if it has one (the oldest, should earlier duplicates remain). */
async function refuseRegistered(db: Sql, organizationId: string, url: string): Promise<void> {
  const existing = await db.one<{ id: string }>('SELECT id FROM apps WHERE organization_id = $1 AND url = $2 ORDER BY created_at, id LIMIT 1', [organizationId, url]);
  if (existing !== undefined) throw new AppExists(existing.id);
}
