import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { can, Forbidden, InvalidInput, isUuid, newId, type ErrorId, type MemberCaller } from '@openbot/domain';
import { isMcpFailure, type Remote } from '@openbot/protocol';
import { Database } from '../../../../platform/src/database/sql';
import { SqlFailureRecorder } from '../../../../platform/src/errors/sql-failure-recorder';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { VaultSecrets } from '../../../../platform/src/vaults/vault-secrets';
import { AppClient, referenceCheckUrl } from '../app-client';
import { appNotFound } from '../app-failures';
import { CONNECTION_SECRETS_PURPOSE, CONNECTION_VIEW_COLUMNS, type AppView, type ConnectionOwner, type ConnectionView } from '../app-view';
import { probeConnection } from '../connection-probe';
import { recordAudit } from '../../../../platform/src/audit/record-audit';
import { prepareValues, referencesOf, type GivenValue } from '../connection-values';

/**
 * Sets up a connection to one remote of an App with the one preparation rule (GRANT-06): the
 * App's card is refreshed once, the selected remote and its values are checked against that
 * refreshed card, the prepared connection is probed (handshake only), and exactly that prepared
 * remote and those values are saved, in the state the probe found (`ready`,
 * `needs_authorization` or `failed` with its error ID). Values may be Vault references, checked
 * for the caller at save (`vaults.use`, allowedHosts) and again before each send. An organization connection needs
 * `apps.manage`; a member connection belongs to the caller.
 */
export class CreateConnection extends Command<ConnectionView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly owner: ConnectionOwner,
    readonly remote: string | null,
    readonly variables: Readonly<Record<string, GivenValue>>,
    readonly headers: Readonly<Record<string, GivenValue>>,
  ) {
    super();
  }
}

@CommandHandler(CreateConnection)
export class CreateConnectionHandler implements ICommandHandler<CreateConnection> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
  ) {}

  async execute(command: CreateConnection): Promise<ConnectionView> {
    const { caller, appId, owner } = command;
    if (!isUuid(appId)) throw appNotFound();
    if (owner === 'organization' && !can(caller, 'apps.manage')) throw new Forbidden('An organization connection needs the apps.manage permission; a member connection (owner: "member") needs apps.write.');
    const app = await this.db.one<AppView>('SELECT id, url, card, remotes FROM apps WHERE id = $1 AND organization_id = $2', [appId, caller.organizationId]);
    if (app === undefined) throw appNotFound();

    // Refresh the card once (GRANT-06): the remote and its values are checked against what it says now.
    let remotes: readonly Remote[] = app.remotes;
    if (app.card) {
      try {
        remotes = (await this.client.discover(app.url, AbortSignal.timeout(15_000))).serverCard.remotes;
      } catch (error) {
        if (!isMcpFailure(error)) throw error;
        throw new InvalidInput([{ path: '', message: `the App's Server Card could not be read again: ${error.message}` }]);
      }
    }
    const remote = command.remote === null ? remotes[0] : remotes.find((r) => r.url === command.remote);
    if (remote === undefined) throw new InvalidInput([{ path: 'remote', message: `remote must be the url of one of the App's remotes: ${remotes.map((r) => r.url).join(', ')}` }]);
    const { stored, secrets } = prepareValues(remote, app.card, command.variables, command.headers);

    // Vault references: the caller needs vaults.use on each one's Vault, and its item's allowedHosts must admit the remote's host.
    const checkUrl = referenceCheckUrl(remote, stored.variables, secrets.variables);
    await this.vaults.checkForSave(caller, referencesOf(stored).map((use) => ({ ...use, url: checkUrl })));

    const probe = await probeConnection(this.client, { organizationId: caller.organizationId, remote, ...stored, secrets }, { kind: 'member', id: caller.memberId });

    return this.db.transaction(async (tx) => {
      // The App must still exist (a delete takes it FOR UPDATE and counts connections).
      const locked = await tx.one('SELECT 1 FROM apps WHERE id = $1 AND organization_id = $2 FOR SHARE', [appId, caller.organizationId]);
      if (locked === undefined) throw appNotFound();
      if (app.card) await tx.count('UPDATE apps SET remotes = $2 WHERE id = $1', [appId, JSON.stringify(remotes)]);
      const hasSecrets = Object.keys(secrets.headers).length + Object.keys(secrets.variables).length > 0;
      const secretsRecordId = hasSecrets ? await this.sealed.put(CONNECTION_SECRETS_PURPOSE, secrets, tx) : null;
      let errorId: string | null = null;
      if (probe.failure !== null) {
        errorId = newId<ErrorId>();
        await this.failures.record(tx, { errorId: errorId as ErrorId, category: probe.failure.category, origin: 'app-connection.probe', cause: probe.failure });
      }
      const row = await tx.one<ConnectionView>(
        `INSERT INTO app_connections (id, organization_id, app_id, owner, member_id, remote, prepared_remote, variables, headers, secrets_record_id,
                                      state, era, protocol_version, category, error_id, checked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, now())
         RETURNING ${CONNECTION_VIEW_COLUMNS}`,
        [
          newId(),
          caller.organizationId,
          appId,
          owner,
          owner === 'member' ? caller.memberId : null,
          remote.url,
          JSON.stringify(remote),
          JSON.stringify(stored.variables),
          JSON.stringify(stored.headers),
          secretsRecordId,
          probe.state,
          probe.era,
          probe.protocolVersion,
          probe.failure?.category ?? null,
          errorId,
        ],
      );
      // Audited with what it points at; header and variable names only, never a value (finding 12 of issue 44).
      await recordAudit(tx, {
        organizationId: caller.organizationId,
        actor: caller,
        action: 'app-connection.created',
        target: { type: 'app-connection', id: row!.id },
        details: { appId, owner, remote: remote.url, headers: Object.keys(stored.headers).sort(), variables: Object.keys(stored.variables).sort() },
      });
      return row!;
    });
  }
}
