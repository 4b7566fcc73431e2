import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { newId, type BotId, type MemberCaller } from '@openbot/domain';
import { Database } from '../../database/sql';
import { VaultSecrets } from '../../vaults/vault-secrets';
import {
  BOT_VIEW_COLUMNS,
  checkDelegateBots,
  checkToolKinds,
  checkToolNames,
  parseModelReference,
  toolReferenceUses,
  unknownModelProvider,
  withEffectiveKind,
  type BotLimits,
  type BotTool,
  type BotView,
} from '../bot-view';
import { DEFAULT_BOT_MEMORY, type BotMemorySettings } from '../../memory/memory-view';

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
  ) {}

  async execute({ caller, name, model, instructions, tools, limits, memory }: CreateBot): Promise<BotView> {
    const { provider } = parseModelReference(model);
    checkToolNames(tools);
    checkToolKinds(tools);
    await checkDelegateBots(this.db, caller.organizationId, tools);
    // Naming a Vault reference needs vaults.use on its Vault, and its host in the item's allowedHosts (SEC-02).
    await this.vaults.checkForSave(caller, toolReferenceUses(tools));
    const id = newId<BotId>();
    // The organization is in the provider lookup, so another organization's provider never counts (IDN-08).
    const row = await this.db.one<BotView>(
      `INSERT INTO bots (id, organization_id, name, model, instructions, tools, limits, memory)
       SELECT $1, $2, $3, $4, $5, $6::jsonb, $8::jsonb, $9::jsonb
        WHERE EXISTS (SELECT 1 FROM model_providers WHERE organization_id = $2 AND name = $7)
       RETURNING ${BOT_VIEW_COLUMNS}`,
      [id, caller.organizationId, name, model, instructions, JSON.stringify(tools.map(withEffectiveKind)), provider, JSON.stringify(limits), JSON.stringify(memory)],
    );
    if (row === undefined) throw unknownModelProvider(provider);
    return row;
  }
}
