import { Inject, Optional } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { Conflict, identityForMember, isFinal, isUuid, newId, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine, executionReads, inputHash, type Queryable } from '@openbot/engine';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { anyLimitSql } from '../../../../platform/src/billing/budget-usage';
import { checkMessageFiles } from '../../files/message-files';
import { Database, type TransactionSql } from '../../../../platform/src/database/sql';
import { executionIdentity } from '../../../../platform/src/identity/identity-codec';
import { TURN } from '../../../../platform/src/turn-core/turn-contract';
import type { TurnInput } from '../../../../platform/src/turn-core/turn-state';
import { checkInputAffordable, checkTurnAdmission } from './turn-admission-limits';
import type { InputToAdmit, MessageAdmission } from '../../../../platform/src/turn-core/chat-inputs';

export type { Admission, InputToAdmit, MessageAdmission } from '../../../../platform/src/turn-core/chat-inputs';

/**
 * A user message (EXE-02, STC-02, STC-03). Under the Chat's row lock, which orders every input:
 * with no advancing Turn a new Turn starts; input of the identity whose Turn is advancing steers
 * it (read at its next model step) while that Turn still takes steering (decision 083); anyone
 * else's input, and input the Turn no longer takes, queues as a Turn of its own, behind the
 * ones already waiting. Each needs something left on its budgets and credits (BudgetExceeded
 * otherwise) and, under credits, a platform price for the Bot's model (ModelNotPriced); a retry
 * of an admitted command still answers as before. With an `Idempotency-Key` the command and its answer are stored with the
 * message, so a retry — also one racing the first request — answers the same ids. A new Turn
 * carries the caller's ExecutionIdentity (IDN-01): its model and tool calls are checked against
 * it, so revoking the key or removing the member stops the Turn at its next check (IDN-06). A
 * Turn it would queue or start past the organization's limits is 429 RateLimited (decision 076).
 */
export class PostMessage extends Command<MessageAdmission> {
  constructor(
    readonly caller: MemberCaller,
    readonly chatId: string,
    readonly content: string,
    readonly commandKey: string | null,
    /** Files for the model beside `content` (checked against the Bot's provider, decision 036). */
    readonly fileIds: readonly string[] = [],
  ) {
    super();
  }
}

@CommandHandler(PostMessage)
export class PostMessageHandler implements ICommandHandler<PostMessage> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
    // Absent (a test without the node's config): no default price.
    @Optional() @Inject(RUNTIME_CONFIG) private readonly config?: RuntimeConfig,
  ) {}

  async execute({ caller, chatId, content, commandKey, fileIds }: PostMessage): Promise<MessageAdmission> {
    if (!isUuid(chatId)) throw new NotFound('Chat');
    // COMMIT goes right behind the admission's last statements: one round trip fewer before the 202.
    return this.db.transaction((tx) =>
      admitInput(tx, this.engine, {
        chatId,
        organizationId: caller.organizationId,
        scope: { kind: 'member', id: caller.memberId as string },
        identity: (botId) => executionIdentity.encode(identityForMember(caller, { botId, requires: ['chats.write'] })),
        content,
        fileIds,
        author: null,
        commandKey,
        defaultPrice: this.config?.defaultPrice ?? null,
        ...(this.config ? { limits: this.config.organizationLimits } : {}),
      }),
    );
  }
}

/**
 * The admission of one input, in the caller's transaction (see PostMessage). A Turn it starts
 * runs once that transaction committed. Its last statements are sent side by side and not
 * waited for: the transaction checks them at COMMIT, which goes right behind them.
 */
export async function admitInput(tx: TransactionSql, engine: Engine, input: InputToAdmit): Promise<MessageAdmission> {
  const { chatId, scope, content, commandKey } = input;
  const fileIds = input.fileIds ?? [];
  // A message without files hashes as it did before files existed: earlier keys keep their meaning.
  const hash = inputHash(fileIds.length === 0 ? { content } : { content, fileIds: [...fileIds] });
  const chat = await lockChat(tx, chatId, input.organizationId, scope);
  if (commandKey !== null) {
    const earlier = await readCommand(tx, scope, chatId, commandKey);
    if (earlier !== null) {
      if (!earlier.input_hash.equals(hash)) throw new Conflict('CommandKeyConflict', 'This Idempotency-Key was already used with another message.');
      return earlier.answer;
    }
  }
  // A Chat being deleted admits nothing and answers as if it were gone (RES-04).
  if (chat.closed_at !== null) throw new NotFound('Chat');
  if (fileIds.length > 0) await checkMessageFiles(tx, input.organizationId, await botModel(tx, chat.bot_id), fileIds);
  // The rules a delegate tool's task passes too (IDN-05): budgets, credits, the model's price.
  await checkInputAffordable(tx, { organizationId: input.organizationId, scope, botId: chat.bot_id, limited: chat.limited, defaultPrice: input.defaultPrice });
  const active = chat.active_turn_id === null ? null : await readTurn(tx, chat.active_turn_id);
  let admission: MessageAdmission;
  /** A Turn this input starts or queues: its row goes in with the message, in one statement. */
  let newTurn: { readonly seq: number; readonly state: 'queued' | 'running' } | null = null;
  const messageId = newId();
  if (active !== null && active.scope_kind === scope.kind && active.scope_id === scope.id && active.cancelling === false && active.steering_closed === false) {
    admission = { messageId, turnId: active.id, executionId: active.execution_id, admission: 'steered' };
  } else {
    const turnId = newId();
    const held = active !== null;
    if (input.limits !== undefined) await checkTurnAdmission(tx, input.organizationId, chatId, held, input.limits);
    const turnInput: TurnInput = { chatId, turnId, organizationId: input.organizationId, scope };
    // Answers once the insert is sent, without waiting for its answer (one round trip, not two):
    // the message's statement goes out behind it, and COMMIT behind them all.
    const executionId = await engine.in(tx).submit(
      {
        ...TURN.command(turnInput),
        scope: { ...scope, organizationId: input.organizationId },
        resource: { type: 'turn', id: turnId },
        identity: input.identity(chat.bot_id),
      },
      { held },
    );
    newTurn = { seq: chat.last_turn_seq + 1, state: held ? 'queued' : 'running' };
    admission = { messageId, turnId, executionId, admission: held ? 'queued' : 'started' };
  }
  // Independent rows of one transaction: a failure of any fails the whole admission, as before.
  tx.send({
    name: 'chats.admit_input',
    text: `WITH c AS (
             UPDATE chats SET last_position = last_position + 1,
               last_turn_seq = last_turn_seq + CASE WHEN $5 = 'steered' THEN 0 ELSE 1 END,
               active_turn_id = CASE WHEN $5 = 'started' THEN $3::uuid ELSE active_turn_id END
              WHERE id = $2 RETURNING last_position
           ), t AS (
             INSERT INTO chat_turns (id, chat_id, seq, execution_id, state, scope_kind, scope_id)
             SELECT $3, $2, $8, $9, $10, $11, $12 WHERE $9::uuid IS NOT NULL
           )
           INSERT INTO chat_messages (id, chat_id, turn_id, position, role, content, author, file_ids)
           SELECT $1, $2, $3, c.last_position, 'user', $4, $6, $7::uuid[] FROM c`,
    values: [
      messageId,
      chatId,
      admission.turnId,
      content,
      admission.admission,
      input.author,
      fileIds,
      newTurn?.seq ?? null,
      newTurn === null ? null : admission.executionId,
      newTurn?.state ?? null,
      scope.kind,
      scope.id,
    ],
  });
  if (commandKey !== null) {
    tx.send({
      name: 'chats.insert_command',
      text: `INSERT INTO chat_commands (scope_kind, scope_id, chat_id, command_key, input_hash, answer) VALUES ($1, $2, $3, $4, $5, $6)`,
      values: [scope.kind, scope.id, chatId, commandKey, hash, JSON.stringify(admission)],
    });
  }
  return admission;
}

/**
 * The Chat's row lock, which orders every input. Its read also answers whether a budget, rate
 * limit or credit account applies to this input (PLAT-08), so admission needs no read of its own.
 */
const LOCK_CHAT = `SELECT bot_id, active_turn_id, closed_at, last_turn_seq,
         ${anyLimitSql({ organizationId: '$2::uuid', scopeKind: '$3::text', scopeId: '$4::uuid', botId: 'chats.bot_id' })} AS limited
    FROM chats WHERE id = $1 AND organization_id = $2 FOR UPDATE`;

async function lockChat(tx: Queryable, chatId: string, organizationId: string, scope: InputToAdmit['scope']) {
  const { rows } = await tx.query<{ bot_id: string; active_turn_id: string | null; closed_at: Date | null; last_turn_seq: number; limited: boolean }>({
    name: 'chats.lock',
    text: LOCK_CHAT,
    values: [chatId, organizationId, scope.kind, scope.id],
  });
  const chat = rows[0];
  if (chat === undefined) throw new NotFound('Chat');
  return chat;
}

async function botModel(tx: Queryable, botId: string): Promise<string> {
  const { rows } = await tx.query<{ model: string }>({ name: 'chats.bot_model', text: 'SELECT model FROM bots WHERE id = $1', values: [botId] });
  return rows[0]!.model;
}

async function readCommand(tx: Queryable, scope: { kind: string; id: string }, chatId: string, key: string) {
  const { rows } = await tx.query<{ input_hash: Buffer; answer: MessageAdmission }>({
    name: 'chats.read_command',
    text: 'SELECT input_hash, answer FROM chat_commands WHERE scope_kind = $1 AND scope_id = $2 AND chat_id = $3 AND command_key = $4',
    values: [scope.kind, scope.id, chatId, key],
  });
  return rows[0] ?? null;
}

/**
 * The advancing Turn; it takes no steering when a stop reached its execution (`cancelling`) or
 * when it makes no more model calls (`steering_closed`, set under this same row lock, decision 083).
 */
async function readTurn(tx: Queryable, turnId: string) {
  const { rows } = await tx.query<{ id: string; execution_id: string; scope_kind: string; scope_id: string; steering_closed: boolean }>({
    name: 'chats.active_turn_steering',
    text: 'SELECT id, execution_id, scope_kind, scope_id, steering_closed FROM chat_turns WHERE id = $1',
    values: [turnId],
  });
  const turn = rows[0];
  if (turn === undefined) return null;
  // Its execution's state through the engine's read API: feature SQL never joins `executions`.
  const execution = await executionReads.byId(tx, turn.execution_id);
  if (execution === null) return null;
  return { ...turn, cancelling: execution.state === 'cancelling' || isFinal(execution.state) };
}
