import { Inject } from '@nestjs/common';
import { Command, CommandHandler, QueryBus, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
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
import type { BotMemorySettings } from '../bot-memory';

/** The fields of a Bot a PATCH may change; an absent field keeps its value. */
export interface BotChanges {
  readonly name?: string;
  readonly model?: string;
  readonly instructions?: string;
  readonly tools?: readonly BotTool[];
  /** Replaces the whole limits object; a limit left out takes its default again. */
  readonly limits?: BotLimits;
  /** Replaces the memory switches. */
  readonly memory?: BotMemorySettings;
}

/**
 * Changes some fields of a Bot of the caller's organization and answers the whole Bot.
 * A malformed, unknown or other organization's ID is NotFound, all alike (IDN-08).
 */
export class UpdateBot extends Command<BotView> {
  constructor(
    readonly caller: MemberCaller,
    readonly id: string,
    readonly changes: BotChanges,
  ) {
    super();
  }
}

@CommandHandler(UpdateBot)
export class UpdateBotHandler implements ICommandHandler<UpdateBot> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(TurnTools) private readonly kinds: TurnTools,
  ) {}

  async execute({ caller, id, changes: given }: UpdateBot): Promise<BotView> {
    let changes = given;
    if (!isUuid(id)) throw new NotFound('Bot');
    const provider = changes.model === undefined ? null : parseModelReference(changes.model).provider;
    if (changes.tools !== undefined) {
      checkToolNames(changes.tools);
      checkToolKinds(changes.tools, this.kinds);
      await checkDelegateBots(this.db, caller.organizationId, changes.tools);
      await checkApproverMembers(this.db, caller.organizationId, changes.tools);
      // App tools save their declarations now, from the connection's discovery (STC-07), outside any transaction.
      changes = { ...changes, tools: await this.queries.execute(new DeclareAppTools(caller, changes.tools)) };
    }
    const references = changes.tools === undefined ? [] : toolReferenceUses(changes.tools);
    return this.db.transaction(async (tx) => {
      // Lock the Bot first, so an unknown Bot is a 404 before the model is looked at.
      const found = await tx.one<{ tools: BotTool[] }>('SELECT tools FROM bots WHERE id = $1 AND organization_id = $2 FOR UPDATE', [id, caller.organizationId]);
      if (found === undefined) throw new NotFound('Bot');
      // Whoever saves a tool set names its references, also those it kept as they were (SEC-02).
      await this.vaults.checkForSave(caller, references, tx);
      // Literal header values are sealed now; `null` keeps a tool's saved one (decision 036).
      let obsolete: string[] = [];
      if (changes.tools !== undefined) {
        // Where tools send and with which headers is audited: names only, never a value.
        await auditToolChanges(tx, caller, id, found.tools, changes.tools);
        const sealedHeaders = await sealToolHeaders(tx, this.sealed, changes.tools, found.tools);
        changes = { ...changes, tools: sealedHeaders.tools };
        obsolete = sealedHeaders.obsolete;
      }
      if (provider !== null) {
        // The key-share lock waits for a concurrent delete of the provider, which then answers no row (ModelProviderInUse).
        const providers = await tx.count('SELECT 1 FROM model_providers WHERE organization_id = $1 AND name = $2 FOR KEY SHARE', [caller.organizationId, provider]);
        if (providers === 0) throw unknownModelProvider(provider);
      }
      const row = await tx.one<BotView>(
        `UPDATE bots SET name = COALESCE($3, name), model = COALESCE($4, model), instructions = COALESCE($5, instructions),
                tools = COALESCE($6::jsonb, tools), limits = COALESCE($7::jsonb, limits), memory = COALESCE($8::jsonb, memory), updated_at = now()
          WHERE id = $1 AND organization_id = $2
          RETURNING ${BOT_VIEW_COLUMNS}`,
        [
          id,
          caller.organizationId,
          changes.name ?? null,
          changes.model ?? null,
          changes.instructions ?? null,
          changes.tools === undefined ? null : JSON.stringify(changes.tools.map(withEffectiveKind)),
          changes.limits === undefined ? null : JSON.stringify(changes.limits),
          changes.memory === undefined ? null : JSON.stringify(changes.memory),
        ],
      );
      if (row === undefined) throw new NotFound('Bot');
      if (obsolete.length > 0) await tx.count('DELETE FROM sealed_records WHERE id = ANY($1::uuid[])', [obsolete]);
      return row;
    });
  }
}
