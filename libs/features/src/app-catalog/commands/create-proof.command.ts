import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, isUuid, newId, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { appNotFound } from '../../apps/app-failures';
import { PROOF_VIEW_COLUMNS, type ProofView } from '../proof-view';

/**
 * Starts a proof of an App's domain (DEVT-01): a pending proof with a fresh token the developer
 * serves at `https://<domain>/.well-known/openbot-app-proof`. `domain` is a host, with a port when
 * the App is served on one; it must be the host of the App's URL.
 */
export class CreateProof extends Command<ProofView> {
  constructor(
    readonly caller: MemberCaller,
    readonly appId: string,
    readonly domain: string,
  ) {
    super();
  }
}

@CommandHandler(CreateProof)
export class CreateProofHandler implements ICommandHandler<CreateProof> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, appId, domain }: CreateProof): Promise<ProofView> {
    if (!isUuid(appId)) throw appNotFound();
    const app = await this.db.one<{ url: string }>('SELECT url FROM apps WHERE id = $1 AND organization_id = $2', [appId, caller.organizationId]);
    if (app === undefined) throw appNotFound();
    const given = domain.trim().toLowerCase();
    let host: string | null = null;
    try {
      const parsed = new URL(`https://${given}`);
      if (parsed.host === given) host = parsed.hostname;
    } catch {
      host = null;
    }
    if (host === null) throw new InvalidInput([{ path: 'domain', message: 'must be a host name, with an optional port' }]);
    if (host !== new URL(app.url).hostname) throw new InvalidInput([{ path: 'domain', message: "must be the host of the App's URL" }]);
    const row = await this.db.one<ProofView>(
      `INSERT INTO app_proofs (id, organization_id, app_id, domain, token, state) VALUES ($1, $2, $3, $4, $5, 'pending') RETURNING ${PROOF_VIEW_COLUMNS}`,
      [newId(), caller.organizationId, appId, given, `openbot-proof-${randomBytes(24).toString('base64url')}`],
    );
    return row!;
  }
}
