import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, InvalidInput, isUuid, newId, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { appNotFound } from '../../apps/app-failures';
import { Database } from '../../database/sql';
import { DEVELOPER_TEST } from '../developer-test.workflow';

/** A developer test needs a verified proof of the App's domain. */
export class AppProofRequired extends Conflict {
  constructor() {
    super('AppProofRequired', "A developer test needs a verified proof of the App's domain.");
  }
}

/**
 * Starts a developer test of an App (DEVT-01): in one transaction it checks the verified proof,
 * submits the execution and stores the test with its original caller and that execution's ID,
 * so a retry of the answer or a takeover of the run names the same execution and caller.
 */
export class StartDeveloperTest extends Command<{ readonly id: string; readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly remote: string | undefined,
  ) {
    super();
  }
}

@CommandHandler(StartDeveloperTest)
export class StartDeveloperTestHandler implements ICommandHandler<StartDeveloperTest> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, appId, remote }: StartDeveloperTest): Promise<{ id: string; executionId: string }> {
    if (!isUuid(appId)) throw appNotFound();
    const id = newId();
    let start: () => void = () => undefined;
    const executionId = await this.db.transaction(async (tx) => {
      const app = await tx.one<{ remotes: Array<{ url: string }> }>('SELECT remotes FROM apps WHERE id = $1 AND organization_id = $2 FOR SHARE', [appId, caller.organizationId]);
      if (app === undefined) throw appNotFound();
      const chosen = remote === undefined ? app.remotes[0]?.url : app.remotes.find((r) => r.url === remote)?.url;
      if (chosen === undefined) throw new InvalidInput([{ path: 'remote', message: "is not the url of one of the App's remotes" }]);
      const proof = await tx.one("SELECT 1 FROM app_proofs WHERE app_id = $1 AND organization_id = $2 AND state = 'verified' LIMIT 1 FOR SHARE", [appId, caller.organizationId]);
      if (proof === undefined) throw new AppProofRequired();
      const submitted = await this.engine.submitIn(
        tx,
        {
          ...DEVELOPER_TEST.command({ testId: id, organizationId: caller.organizationId, memberId: caller.memberId }),
          scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
          resource: { type: 'app-developer-test', id },
        },
        { held: false },
      );
      await tx.query(`INSERT INTO app_developer_tests (id, organization_id, app_id, member_id, execution_id, remote, state) VALUES ($1, $2, $3, $4, $5, $6, 'running')`, [
        id,
        caller.organizationId,
        appId,
        caller.memberId,
        submitted.executionId,
        chosen,
      ]);
      start = submitted.start;
      return submitted.executionId;
    });
    start();
    return { id, executionId };
  }
}
