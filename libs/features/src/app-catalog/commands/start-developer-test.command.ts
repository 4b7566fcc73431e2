import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, InvalidInput, isUuid, newId, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import type { Remote } from '@openbot/protocol';
import { referenceCheckUrl } from '../../apps/app-client';
import { appNotFound } from '../../apps/app-failures';
import { CONNECTION_SECRETS_PURPOSE } from '../../apps/app-view';
import { prepareValues, referencesOf, type GivenValue } from '../../apps/connection-values';
import { Database } from '../../../../platform/src/database/sql';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { VaultSecrets } from '../../../../platform/src/vaults/vault-secrets';
import { DEVELOPER_TEST } from '../developer-test.workflow';

/** A developer test needs a verified proof of the App's domain. */
export class AppProofRequired extends Conflict {
  constructor() {
    super('AppProofRequired', "A developer test needs a verified proof of the App's domain.");
  }
}

/**
 * Starts a developer test of an App (DEVT-01): in one transaction it checks the remote's
 * `variables` and `headers` with the rules of App connections (literals sealed, Vault references
 * checked for the caller), checks the verified proof, submits the execution and stores the test
 * with its original caller, its prepared values and that execution's ID,
 * so a retry of the answer or a takeover of the run names the same execution and caller.
 */
export class StartDeveloperTest extends Command<{ readonly id: string; readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly remote: string | undefined,
    readonly variables: Readonly<Record<string, GivenValue>> = {},
    readonly headers: Readonly<Record<string, GivenValue>> = {},
  ) {
    super();
  }
}

@CommandHandler(StartDeveloperTest)
export class StartDeveloperTestHandler implements ICommandHandler<StartDeveloperTest> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
  ) {}

  async execute({ caller, appId, remote, variables, headers }: StartDeveloperTest): Promise<{ id: string; executionId: string }> {
    if (!isUuid(appId)) throw appNotFound();
    const id = newId();
    const executionId = await this.db.transaction(async (tx) => {
      const app = await tx.one<{ card: boolean; remotes: Remote[] }>('SELECT card, remotes FROM apps WHERE id = $1 AND organization_id = $2 FOR SHARE', [appId, caller.organizationId]);
      if (app === undefined) throw appNotFound();
      const chosen = remote === undefined ? app.remotes[0] : app.remotes.find((r) => r.url === remote);
      if (chosen === undefined) throw new InvalidInput([{ path: 'remote', message: "is not the url of one of the App's remotes" }]);
      // The values of App connections, with their rules: checked against the remote, literals sealed, Vault references checked for the caller.
      const { stored, secrets } = prepareValues(chosen, app.card, variables, headers);
      const checkUrl = referenceCheckUrl(chosen, stored.variables, secrets.variables);
      await this.vaults.checkForSave(caller, referencesOf(stored).map((use) => ({ ...use, url: checkUrl })), tx);
      const proof = await tx.one("SELECT 1 FROM app_proofs WHERE app_id = $1 AND organization_id = $2 AND state = 'verified' LIMIT 1 FOR SHARE", [appId, caller.organizationId]);
      if (proof === undefined) throw new AppProofRequired();
      const executionId = await this.engine.in(tx).submit({
        ...DEVELOPER_TEST.command({ testId: id, organizationId: caller.organizationId, memberId: caller.memberId }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'app-developer-test', id },
      });
      const hasSecrets = Object.keys(secrets.headers).length + Object.keys(secrets.variables).length > 0;
      const secretsRecordId = hasSecrets ? await this.sealed.put(CONNECTION_SECRETS_PURPOSE, secrets, tx) : null;
      await tx.query(
        `INSERT INTO app_developer_tests (id, organization_id, app_id, member_id, execution_id, remote, prepared_remote, variables, headers, secrets_record_id, state)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'running')`,
        [id, caller.organizationId, appId, caller.memberId, executionId, chosen.url, JSON.stringify(chosen), JSON.stringify(stored.variables), JSON.stringify(stored.headers), secretsRecordId],
      );
      return executionId;
    });
    return { id, executionId };
  }
}
