import { Inject, Injectable } from '@nestjs/common';
import type { SealedRecordId } from '@openbot/domain';
import { cappedFetch, discoverApp, McpConnection, McpFailure, remoteUrl, type AppDiscovery, type Fetch, type Remote } from '@openbot/protocol';
import type { Queryable } from '@openbot/engine';
import { EgressClient } from '../egress/egress-client';
import { SealedRecords } from '../sealing/sealed-records';
import type { ConnectionSecrets, StoredValue } from './app-view';

/** What opening a connection needs: the selected remote, its values as stored, and its literal values. */
export interface ConnectionTarget {
  readonly remote: Remote;
  readonly variables: Readonly<Record<string, StoredValue>>;
  readonly headers: Readonly<Record<string, StoredValue>>;
  readonly secrets: ConnectionSecrets;
  /** The stored connection this target is of (absent for a connection being set up). */
  readonly connectionId?: string;
}

/** The seam App OAuth plugs into (libs/openbot/src/app-oauth): a connection's requests carry its grant's bearer token. */
export interface ConnectionAuthorization {
  fetchFor(connectionId: string, fetch: Fetch): Fetch;
}

/**
 * The one value of a header or URL variable, resolved when a request is sent. A literal comes
 * from the connection's sealed record. This is the seam where Vault references plug in (they
 * need `vaults.use` and the item's allowed hosts checked before each send); until Vaults exist a
 * reference fails as `forbidden` and nothing is sent.
 */
export async function resolveConnectionValue(name: string, stored: StoredValue, literal: string | undefined): Promise<string> {
  if (stored === null) {
    if (literal === undefined) throw new McpFailure('refused', `the value of "${name}" is missing from the connection's sealed record`);
    return literal;
  }
  throw new McpFailure('refused', `"${name}" names a Vault reference, and Vault references cannot be resolved on this server yet`);
}

/**
 * How OpenBot reaches App servers: only through the pinned egress client (decision 016), with
 * the document cap for Server Cards and the tool-answer cap for MCP answers.
 */
@Injectable()
export class AppClient {
  constructor(
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  private authorization: ConnectionAuthorization | null = null;

  /** Set once by the App OAuth module: stored connections then send their grant's token. */
  useAuthorization(authorization: ConnectionAuthorization): void {
    this.authorization = authorization;
  }

  /** Reads an App URL once: a Server Card or a bare endpoint. */
  discover(url: string, signal?: AbortSignal): Promise<AppDiscovery> {
    return discoverApp(cappedFetch(this.egress.fetch, this.egress.limits.documentBytes), url, signal ? { signal } : {});
  }

  /** Opens an MCP connection to a prepared target; headers are resolved per request (see resolveConnectionValue). */
  async open(target: ConnectionTarget, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<McpConnection> {
    const values: Record<string, string> = {};
    for (const [name, stored] of Object.entries(target.variables)) values[name] = await resolveConnectionValue(name, stored, target.secrets.variables[name]);
    const fixed = Object.fromEntries(target.remote.headers.filter((h) => h.value !== undefined).map((h) => [h.name, h.value!]));
    return McpConnection.open({
      url: remoteUrl(target.remote, values),
      fetch: target.connectionId !== undefined && this.authorization !== null ? this.authorization.fetchFor(target.connectionId, this.egress.fetch) : this.egress.fetch,
      answerLimitBytes: this.egress.limits.toolAnswerBytes,
      headers: async () => {
        const headers: Record<string, string> = { ...fixed };
        for (const [name, stored] of Object.entries(target.headers)) headers[name] = await resolveConnectionValue(name, stored, target.secrets.headers[name]);
        return headers;
      },
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  /** A stored connection's target: its prepared remote and its sealed literal values (null once it is being deleted). */
  async targetOf(db: Queryable, connectionId: string): Promise<ConnectionTarget | null> {
    return this.target(db, connectionId, false);
  }

  /** The same, also for a connection being deleted (its cleanup still ends its sessions). */
  async targetOfAny(db: Queryable, connectionId: string): Promise<ConnectionTarget | null> {
    return this.target(db, connectionId, true);
  }

  private async target(db: Queryable, connectionId: string, deleting: boolean): Promise<ConnectionTarget | null> {
    const { rows } = await db.query<{ prepared_remote: Remote; variables: Record<string, StoredValue>; headers: Record<string, StoredValue>; secrets_record_id: string | null }>({
      name: 'apps.connection_target',
      text: `SELECT prepared_remote, variables, headers, secrets_record_id FROM app_connections WHERE id = $1 AND ($2::boolean OR deleting_at IS NULL)`,
      values: [connectionId, deleting],
    });
    const row = rows[0];
    if (row === undefined) return null;
    const secrets = row.secrets_record_id === null ? { headers: {}, variables: {} } : (((await this.sealed.get(row.secrets_record_id as SealedRecordId))?.value as ConnectionSecrets | undefined) ?? { headers: {}, variables: {} });
    return { remote: row.prepared_remote, variables: row.variables, headers: row.headers, secrets, connectionId };
  }
}
