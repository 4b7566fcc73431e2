import { Inject } from '@nestjs/common';
import { Command, CommandHandler, QueryBus, type ICommandHandler } from '@nestjs/cqrs';
import { newId, type BotId, type MemberCaller } from '@openbot/domain';
import { checkApproverMembers } from '../../approvals/approver-members';
import { Database } from '../../../../platform/src/database/sql';
import { TurnTools } from '../../../../platform/src/turn-core/turn-tool';
import { VaultSecrets } from '../../../../platform/src/vaults/vault-secrets';
import { SealedRecords } from '../../../../platform/src/sealing/sealed-records';
import { DeclareAppTools } from '../queries/declare-app-tools.query';
import { sealToolHeaders } from '../tool-header-secrets';
import { auditToolChanges } from '../bot-tool-changes';
import {
  BOT_VIEW_COLUMNS,
  checkDelegateBots,
  checkToolKinds,
  checkToolNames,
  toolReferenceUses,
  unknownModelProvider,
  withEffectiveKind,
  type BotLimits,
  type BotTool,
  type BotView,
} from '../bot-view';
import { parseModelReference } from '../../../../platform/src/models/model-reference';
import { DEFAULT_BOT_MEMORY, type BotMemorySettings } from '../bot-memory';

/**
 * Creates a Bot in the caller's organization. Its model must name one of the organization's
 * model providers (400 on `model` otherwise); the check and the insert are one statement.
 * `limits` holds only the limits set; the view fills in the defaults. Header references are
 * checked as VaultSecrets.checkForSave says.
 */
export class CreateBot extends Command<BotView> {
  constructor(
    readonly caller: MemberCaller,
    readonly name: string,
    readonly model: string,
    readonly instructions: string,
    readonly tools: readonly BotTool[],
    readonly limits: BotLimits = {},
    readonly memory: BotMemorySettings = DEFAULT_BOT_MEMORY,
  ) {
    super();
  }
}

@CommandHandler(CreateBot)
export class CreateBotHandler implements ICommandHandler<CreateBot> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(TurnTools) private readonly kinds: TurnTools,
  ) {}

  async execute({ caller, name, model, instructions, tools: given, limits, memory }: CreateBot): Promise<BotView> {
    const { provider } = parseModelReference(model);
    checkToolNames(given);
    checkToolKinds(given, this.kinds);
    await checkDelegateBots(this.db, caller.organizationId, given);
    await checkApproverMembers(this.db, caller.organizationId, given);
    // Naming a Vault reference needs vaults.use on its Vault, and its host in the item's allowedHosts (SEC-02).
    await this.vaults.checkForSave(caller, toolReferenceUses(given));
    // App tools save their declarations now, from the connection's discovery (STC-07), outside any transaction.
    const tools = await this.queries.execute(new DeclareAppTools(caller, given));
    const id = newId<BotId>();
    return this.db.transaction(async (tx) => {
      // Literal header values are sealed in this transaction: a refused Bot leaves no record behind.
      const sealedTools = (await sealToolHeaders(tx, this.sealed, tools, [])).tools;
      // The organization is in the provider lookup, so another organization's provider never counts (IDN-08).
      // The key-share lock waits for a concurrent delete of the provider, which then answers no row:
      // a Bot is never saved naming a provider deleted beside it (ModelProviderInUse).
      const row = await tx.one<BotView>(
        `INSERT INTO bots (id, organization_id, name, model, instructions, tools, limits, memory)
         SELECT $1, $2, $3, $4, $5, $6::jsonb, $8::jsonb, $9::jsonb
          WHERE EXISTS (SELECT 1 FROM model_providers WHERE organization_id = $2 AND name = $7 FOR KEY SHARE)
         RETURNING ${BOT_VIEW_COLUMNS}`,
        [id, caller.organizationId, name, model, instructions, JSON.stringify(sealedTools.map(withEffectiveKind)), provider, JSON.stringify(limits), JSON.stringify(memory)],
      );
      if (row === undefined) throw unknownModelProvider(provider);
      // Where tools send and with which headers is audited: names only, never a value.
      await auditToolChanges(tx, caller, id, [], tools);
      return row;
    });
  }
}
