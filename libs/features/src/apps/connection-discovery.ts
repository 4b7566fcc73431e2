import { Inject, Injectable } from '@nestjs/common';
import { isMcpFailure, type CheckedToolList, type ListedTool } from '@openbot/protocol';
import { Database } from '../../../platform/src/database/sql';
import type { SendActor } from '../../../platform/src/vaults/vault-secrets';
import { AppClient } from './app-client';
import { AppServerUnavailable, connectionNotFound } from './app-failures';

/** Discovery of one connection at one revision, and the warnings it leaves on the connection. */
export interface Discovery extends CheckedToolList {
  readonly revision: number;
}

/**
 * Full discovery (`tools/list`), a separate operation from calls (STC-12), cached per connection
 * and revision: the first reader of a revision lists the server's tools (outside any
 * transaction) and stores them; every later reader of that revision reads the table. The
 * warnings of a cut list or refused tools are written on the connection.
 */
@Injectable()
export class ConnectionDiscovery {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
  ) {}

  /** `tools` for a member's request: a server that cannot be reached is AppServerUnavailable (503). */
  async toolsForMember(connectionId: string, memberId: string): Promise<Discovery> {
    try {
      return await this.tools(connectionId, { actor: { kind: 'member', id: memberId } });
    } catch (error) {
      if (isMcpFailure(error)) throw new AppServerUnavailable(error);
      throw error;
    }
  }

  /** The cached list of `connectionId` at its current revision, listing it when none is cached. */
  async tools(connectionId: string, options: { readonly actor: SendActor | null; readonly refresh?: boolean }): Promise<Discovery> {
    const current = await this.db.one<{ revision: number }>('SELECT revision FROM app_connections WHERE id = $1 AND deleting_at IS NULL', [connectionId]);
    if (current === undefined) throw connectionNotFound();
    if (options.refresh !== true) {
      const cached = await this.cached(connectionId, current.revision);
      if (cached !== null) return cached;
    }
    const listed = await this.list(connectionId, options.actor);
    await this.store(connectionId, current.revision, listed);
    return (await this.cached(connectionId, current.revision)) ?? { ...listed, revision: current.revision };
  }

  /** The cached list of one revision, or null. */
  async cached(connectionId: string, revision: number): Promise<Discovery | null> {
    const row = await this.db.one<{ tools: ListedTool[]; refused: CheckedToolList['refused']; cut_at: number | null }>(
      'SELECT tools, refused, cut_at FROM app_connection_tools WHERE connection_id = $1 AND revision = $2',
      [connectionId, revision],
    );
    return row === undefined ? null : { tools: row.tools, refused: row.refused, cutAt: row.cut_at, revision };
  }

  /** Lists the server's tools now, through a connection of its own that is closed after; Vault references are opened for `actor`. */
  async list(connectionId: string, actor: SendActor | null): Promise<CheckedToolList> {
    const target = await this.client.targetOf(this.db, connectionId);
    if (target === null) throw connectionNotFound();
    const connection = await this.client.open(target, { actor, timeoutMs: 30_000 });
    try {
      return await connection.listTools();
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  /** Stores a list for one revision (the first stored list of a revision wins) and its warnings on the connection. */
  async store(connectionId: string, revision: number, listed: CheckedToolList): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.count(
        `INSERT INTO app_connection_tools (connection_id, revision, tools, refused, cut_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (connection_id, revision) DO NOTHING`,
        [connectionId, revision, JSON.stringify(listed.tools), JSON.stringify(listed.refused), listed.cutAt],
      );
      await tx.count('UPDATE app_connections SET warnings = $3 WHERE id = $1 AND revision = $2', [connectionId, revision, JSON.stringify(discoveryWarnings(listed))]);
    });
  }
}

/** The warnings a discovery leaves on its connection. */
export function discoveryWarnings(listed: CheckedToolList): string[] {
  const warnings: string[] = [];
  if (listed.cutAt !== null) warnings.push(`the server lists more tools than the cap; only the first ${listed.cutAt} are used`);
  for (const refused of listed.refused) warnings.push(`tool "${refused.name}" is refused: ${refused.reason}`);
  return warnings;
}
