import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { newId, type ErrorId } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../platform/src/database/sql';
import { EgressClient } from '../../../platform/src/egress/egress-client';
import { SqlFailureRecorder } from '../../../platform/src/errors/sql-failure-recorder';
import { SealedRecords } from '../../../platform/src/sealing/sealed-records';
import { ToolCalls } from '../../../platform/src/tool-calls/tool-calls';
import { TurnTools } from '../../../platform/src/turn-core/turn-tool';
import { VaultSecrets } from '../../../platform/src/vaults/vault-secrets';
import { CreateBotHandler } from './commands/create-bot.command';
import { DeleteBotHandler } from './commands/delete-bot.command';
import { UpdateBotHandler } from './commands/update-bot.command';
import { GetBotHandler } from './queries/get-bot.query';
import { ListBotsHandler } from './queries/list-bots.query';
import { readLiterals } from './tool-header-secrets';
import { backgroundTool, backgroundToolWorkflow } from './tools/background-tool.workflow';
import { httpTool } from './tools/http-tool';

/**
 * Bots and the tool kinds whose declarations are a Bot's endpoints (http, background), registered
 * with the Turn core's TurnTools (decision 078). Bots sits low among the features: what it needs
 * from a feature above it is asked through a query whose class lives here (DeclareAppTools,
 * answered by Apps; BotKeptByChats, answered by Chats; decision 079).
 */
@Module({ providers: [CreateBotHandler, UpdateBotHandler, DeleteBotHandler, GetBotHandler, ListBotsHandler] })
export class BotsModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(VaultSecrets) private readonly vaults: VaultSecrets,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
    @Inject(SealedRecords) private readonly sealed: SealedRecords,
    @Inject(TurnTools) private readonly tools: TurnTools,
    @Inject(ToolCalls) private readonly toolCalls: ToolCalls,
  ) {}

  /** The tool kinds whose declarations are a Bot's endpoints (http, background), and the background tool's workflow (decision 078). */
  onModuleInit(): void {
    const secrets = {
      open: this.vaults.open.bind(this.vaults),
      literals: (recordId: string, url: string) => readLiterals(this.sealed, recordId, url),
      // A refused reference is an error record of its own (category forbidden), named in the tool's answer (ERR-01).
      recordRefusal: async (refusal: Error, executionId: string): Promise<string> => {
        const errorId = newId<ErrorId>();
        await this.db.transaction((tx) => this.failures.record(tx, { errorId, category: 'forbidden', origin: 'vault reference', cause: refusal, executionId }));
        return errorId;
      },
    };
    const http = { fetch: this.egress.fetch, answerLimitBytes: this.egress.limits.toolAnswerBytes, secrets };
    this.tools.register(httpTool(http));
    this.tools.register(backgroundTool((id) => this.engine.get(id)));
    this.engine.register(backgroundToolWorkflow({ toolCalls: this.toolCalls }));
  }
}
