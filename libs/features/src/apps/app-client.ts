import { Inject, Injectable } from '@nestjs/common';
import type { SealedRecordId } from '@openbot/domain';
import { cappedFetch, discoverApp, McpConnection, McpFailure, remoteUrl, type AppDiscovery, type Fetch, type Remote } from '@openbot/protocol';
import type { Queryable } from '@openbot/engine';
import { EgressClient } from '../../../platform/src/egress/egress-client';
import { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { VaultSecrets, type SendActor } from '../../../platform/src/vaults/vault-secrets';
import type { ConnectionSecrets, StoredValue } from './app-view';

/** What opening a connection needs: the selected remote, its values as stored, and its literal values. */
export interface ConnectionTarget {
  readonly organizationId: string;
  readonly remote: Remote;
  readonly variables: Readonly<Record<string, StoredValue>>;
  readonly headers: Readonly<Record<string, StoredValue>>;
  readonly secrets: ConnectionSecrets;
  /** The stored connection this target is of (absent for a connection being set up). */
  readonly connectionId?: string;
  /** The developer test this target is of: its requests carry the developer's own grant (DEVT-01). */
  readonly developerTestId?: string;
}

/** The seam App OAuth plugs into (libs/features/src/app-oauth): a connection's (or developer test's) requests carry its grant's bearer token. */
export interface ConnectionAuthorization {
  fetchFor(holderId: string, fetch: Fetch): Fetch;
}

/** A Vault reference as a connection stores it. */
type Reference = Exclude<StoredValue, null>;

/**
 * Resolves a connection's values when a request is sent. A literal comes from the connection's
 * sealed record; a Vault reference is opened through VaultSecrets for `actor` at that moment,
 * which checks again that the item and field exist, that its `allowedHosts` admit `url`, and that
 * the member may use its Vault (`vaults.use`). A refused reference throws VaultReferenceRefused
 * (`notSent`): nothing is sent.
 */
export async function resolveConnectionValues(
  vaults: Pick<VaultSecrets, 'open'>,
  use: { readonly organizationId: string; readonly actor: SendActor | null; readonly url: string },
  stored: Readonly<Record<string, StoredValue>>,
  literals: Readonly<Record<string, string>>,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const references: Array<[string, Reference]> = [];
  for (const [name, value] of Object.entries(stored)) {
    if (value !== null) {
      references.push([name, value]);
      continue;
    }
    const literal = literals[name];
    if (literal === undefined) throw new McpFailure('refused', `the value of "${name}" is missing from the connection's sealed record`);
    out[name] = literal;
  }
  if (references.length === 0) return out;
  // Only a member's work may use Vault items: no actor is refused by VaultSecrets itself.
  const values = await vaults.open({ organizationId: use.organizationId, actor: use.actor ?? { kind: 'service', id: 'none' }, url: use.url, references: references.map(([, r]) => r) });
  references.forEach(([name], i) => (out[name] = values[i]!));
  return out;
}

/**
 * The URL a connection's Vault-referenced variables are checked against: the remote's URL with
 * every literal filled in and each referenced variable standing in as `_`. Referenced variables
 * may not be in the host (refused at save), so this has the host the values are sent to.
 */
export function referenceCheckUrl(remote: Remote, variables: Readonly<Record<string, StoredValue>>, literals: Readonly<Record<string, string>>): string {
  const values: Record<string, string> = { ...literals };
  for (const [name, value] of Object.entries(variables)) if (value !== null) values[name] = '_';
  return remoteUrl(remote, values);
}

/** Options of one open: whose work it is (Vault references are opened with its rights), and limits. */
export interface OpenAs {
  readonly actor: SendActor | null;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
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
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
  ) {}

  private authorization: ConnectionAuthorization | null = null;

  /** Set once by the App OAuth module: stored connections then send their grant's token. */
  useAuthorization(authorization: ConnectionAuthorization): void {
    this.authorization = authorization;
  }

  /**
   * The egress fetch of a stored connection's (or developer test's) requests: with its grant's
   * bearer token when App OAuth holds one for it (refreshed before it expires, and once on a
   * 401), else as it is.
   */
  fetchOf(holderId: string): Fetch {
    return this.authorization !== null ? this.authorization.fetchFor(holderId, this.egress.fetch) : this.egress.fetch;
  }

  /** Reads an App URL once: a Server Card or a bare endpoint. */
  discover(url: string, signal?: AbortSignal): Promise<AppDiscovery> {
    return discoverApp(cappedFetch(this.egress.fetch, this.egress.limits.documentBytes), url, signal ? { signal } : {});
  }

  /**
   * Opens an MCP connection to a prepared target. URL variables are resolved once, here; headers
   * are resolved for every request (see resolveConnectionValues), so a Vault reference is checked
   * again right before each send and a revoked right takes effect at the next request.
   */
  async open(target: ConnectionTarget, options: OpenAs): Promise<McpConnection> {
    const url = await this.urlOf(target, options.actor);
    const holder = target.connectionId ?? target.developerTestId;
    const fixed = Object.fromEntries(target.remote.headers.filter((h) => h.value !== undefined).map((h) => [h.name, h.value!]));
    return McpConnection.open({
      url,
      fetch: holder !== undefined ? this.fetchOf(holder) : this.egress.fetch,
      answerLimitBytes: this.egress.limits.toolAnswerBytes,
      headers: async () => ({ ...fixed, ...(await this.headersOf(target, options.actor, url)) }),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
  }

  /** The endpoint of a target, its variables resolved for `actor`. */
  async urlOf(target: ConnectionTarget, actor: SendActor | null): Promise<string> {
    const checkUrl = referenceCheckUrl(target.remote, target.variables, target.secrets.variables);
    const values = await resolveConnectionValues(this.vaults, { organizationId: target.organizationId, actor, url: checkUrl }, target.variables, target.secrets.variables);
    return remoteUrl(target.remote, values);
  }

  /** The connection's own headers (not the card's fixed ones), resolved for `actor` and the host of `url`. */
  headersOf(target: ConnectionTarget, actor: SendActor | null, url: string): Promise<Record<string, string>> {
    return resolveConnectionValues(this.vaults, { organizationId: target.organizationId, actor, url }, target.headers, target.secrets.headers);
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
    const { rows } = await db.query<{ organization_id: string; prepared_remote: Remote; variables: Record<string, StoredValue>; headers: Record<string, StoredValue>; secrets_record_id: string | null }>({
      name: 'apps.connection_target_of_org',
      text: `SELECT organization_id, prepared_remote, variables, headers, secrets_record_id FROM app_connections WHERE id = $1 AND ($2::boolean OR deleting_at IS NULL)`,
      values: [connectionId, deleting],
    });
    const row = rows[0];
    if (row === undefined) return null;
    const secrets = row.secrets_record_id === null ? { headers: {}, variables: {} } : (((await this.sealed.get(row.secrets_record_id as SealedRecordId))?.value as ConnectionSecrets | undefined) ?? { headers: {}, variables: {} });
    return { organizationId: row.organization_id, remote: row.prepared_remote, variables: row.variables, headers: row.headers, secrets, connectionId };
  }
}
