import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BOT_TOOL_KINDS, BOT_TOOL_RETRIES, DEFAULT_BOT_LIMITS, DELEGATE_PARAMETERS, PLAN_PARAMETERS, REMIND_PARAMETERS, MAX_APPROVAL_EXPIRY_SECONDS, MAX_BOT_LIMITS, MEMORY_LEARN_ACCESS, type BotMemorySettings, type MemoryLearnAccess, APPROVER_ROLES, MAX_NAMED_APPROVERS, type ApprovalPolicy, type ApproverPolicy, type BotLimits, type BotTool, type BotToolKind, type BotToolRetry, type BotView, type ToolHeaderValue } from '@openbot/features';
import { type VaultReference } from '@openbot/platform';
import { toVaultReferenceBody } from '../vaults/vault.dto';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const MAX_BOT_TOOLS = 64;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_TOOL_URL_LENGTH = 2048;

/** Validates a field only when it is sent: unlike IsOptional, an explicit `null` is refused. */
const isSent = (_object: object, value: unknown): boolean => value !== undefined;
/** Required, except on a delegate tool, which may leave it out. */
const sentOrNotDelegate = (field: 'description' | 'parameters') => (object: object) =>
  !['delegate', 'plan', 'remind', 'app'].includes((object as { kind?: unknown }).kind as string) || (object as Record<string, unknown>)[field] !== undefined;

export class ApproversBody {
  @ApiPropertyOptional({ type: [String], enum: APPROVER_ROLES, description: 'Roles whose members may decide, besides owners and admins' })
  roles?: string[];

  @ApiPropertyOptional({ type: [String], format: 'uuid', maxItems: MAX_NAMED_APPROVERS, description: 'Members of the organization who may decide (400 on an unknown one)' })
  members?: string[];

  @ApiPropertyOptional({ description: 'true: the member whose message started the Turn cannot decide; another approver must (absent: false)' })
  secondPerson?: boolean;
}

export class BotToolInput {
  @ApiProperty({ pattern: TOOL_NAME.source, example: 'get_weather', description: 'Unique within the Bot; a `plan` tool is named `update_plan` and a `remind` tool `remind` when it has no name' })
  @ValidateIf((object: object) => !['plan', 'remind', 'app'].includes((object as { kind?: unknown }).kind as string) || (object as { name?: unknown }).name !== undefined)
  @IsString()
  @Matches(TOOL_NAME, { message: 'name must be 1 to 64 letters, digits, "_" or "-"' })
  name!: string;

  @ApiProperty({ maxLength: 1024, description: 'Optional for a `delegate` tool' })
  @ValidateIf(sentOrNotDelegate('description'))
  @IsString()
  @MaxLength(1024)
  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'A JSON schema of the arguments; a `delegate` tool has fixed parameters `{ input: string }`' })
  @ValidateIf(sentOrNotDelegate('parameters'))
  @IsObject()
  parameters!: Record<string, unknown>;

  @ApiPropertyOptional({ format: 'uuid', description: '`delegate` tools: the Bot of this organization a call starts a task of' })
  @ValidateIf(isSent)
  @IsString()
  botId?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      '`app` tools: a connection of this organization (or your own member connection) whose tools the Bot uses. Each tool reaches the model under its server name, or `<last 8 hex digits of connectionId>_<name>` when that name is not a valid tool name or is taken',
  })
  @ValidateIf(isSent)
  @IsString()
  connectionId?: string;

  @ApiPropertyOptional({ type: [String], description: '`app` tools: the server names of the tools to use; all of them when absent' })
  @ValidateIf(isSent)
  @IsArray()
  @ArrayMaxSize(128)
  @IsString({ each: true })
  tools?: string[];

  @ApiPropertyOptional({
    default: true,
    description: '`delegate` tools: an attached task ends before its parent, which gets its reply as the tool result; a detached one answers `{ executionId }` at once and may outlive it',
  })
  @ValidateIf(isSent)
  @IsBoolean()
  attached?: boolean;

  @ApiPropertyOptional({
    enum: BOT_TOOL_KINDS,
    default: 'client',
    description:
      'How a call is answered: `client` (default) waits for the API caller to post the output; ' +
      '`http` POSTs `{ callId, name, arguments }` (`arguments` parsed as JSON) to `url` with `content-type: application/json`, the call\'s ' +
      '`Idempotency-Key` (a UUID, the same on every attempt) and the tool\'s `headers`, and gives the model the answer\'s `modelOutput` ' +
      '(with the files its `fileIds` names) when it is JSON with a string `modelOutput`, else the raw answer as text; a 4xx is an error result the model reads, ' +
      'a 5xx or 429 a failed attempt (sent again only with `retry: "safe"`); ' +
      '`background` makes the same HTTP call as an execution of its own that notifies the Turn when it ends; `delegate` starts a task of another Bot; ' +
      '`plan` is the built-in `update_plan` tool; `remind` is the built-in `remind` tool (`{ message, at | inSeconds }`), a durable reminder posted into the Chat when due. ' +
      'These are the built-in kinds; a node may register more. A kind the node does not register is 400 on `tools.<n>.kind`, naming the kinds it does',
  })
  @ValidateIf(isSent)
  // Which names are kinds is the node's (its features register them with TurnTools, decision 080): the create and update commands check it.
  @IsString({ message: `kind must be one of ${BOT_TOOL_KINDS.join(', ')}` })
  kind?: BotToolKind;

  @ApiPropertyOptional({
    maxLength: MAX_TOOL_URL_LENGTH,
    format: 'uri',
    example: 'https://tools.example.com/weather',
    description: 'Required for `http` and `background` tools, refused for `client` tools: an absolute http or https URL without username or password; the egress policy applies when it is called',
  })
  @ValidateIf(isSent)
  @IsString()
  @MaxLength(MAX_TOOL_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({
    enum: BOT_TOOL_RETRIES,
    description:
      '`http` and `background` tools only: `safe` calls are repeated with the same `Idempotency-Key` when an attempt fails; ' +
      '`unsafe` (the default) calls are sent once and wait in `outcome_unknown` when the result is lost',
  })
  @ValidateIf(isSent)
  @IsIn(BOT_TOOL_RETRIES, { message: `retry must be one of ${BOT_TOOL_RETRIES.join(', ')}` })
  retry?: BotToolRetry;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { oneOf: [{ $ref: '#/components/schemas/VaultReferenceBody' }, { type: 'string' }], nullable: true },
    example: { authorization: { vaultItemId: '0190c3f0-1234-7abc-8def-0123456789ab', field: 'token', prefix: 'Bearer ' }, 'x-team': 'research' },
    description:
      '`http` and `background` tools only: headers sent with every call. A Vault reference `{ vaultItemId, field, prefix? }` ' +
      'needs `vaults.use` on its Vault and the tool\'s host in the item\'s `allowedHosts` to be saved (400 on `tools.<n>.headers.<name>` otherwise); ' +
      'both are checked again before every send, and the value is opened only then. A literal string value is stored sealed and answered as `null`; ' +
      '`null` given back keeps the value saved for that header of the tool of the same name, only while the tool\'s kind and URL origin ' +
      '(scheme, host and port) stay the same: a change of either without the value again is 400 on `tools.<n>.headers.<name>` (a saved ' +
      'value goes only to the origin it was saved for; the URL\'s path may change). Every change of a tool\'s URL or headers is audited ' +
      '(`bot.tools-changed`, header names only).',
  })
  @ValidateIf(isSent)
  @IsObject()
  headers?: Record<string, VaultReference | string | null>;

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', enum: ['never', 'always'] },
      {
        type: 'object',
        required: ['argument', 'in'],
        properties: { argument: { type: 'string', description: 'A dotted path into the arguments' }, in: { type: 'array', items: {}, minItems: 1, maxItems: 100 } },
      },
    ],
    default: 'never',
    description:
      'Whether a call waits for a person\'s decision before it runs: `never` (default), `always`, or `{ argument, in }`, which requires approval ' +
      'when the argument at that dotted path is one of the values (JSON comparison; an absent path does not match; arguments that are not a JSON object always require approval)',
  })
  @ValidateIf(isSent)
  approval?: ApprovalPolicy;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_APPROVAL_EXPIRY_SECONDS, description: 'A pending approval of this tool becomes `expired` after this many seconds; none by default' })
  @ValidateIf(isSent)
  @IsInt()
  @Min(1)
  @Max(MAX_APPROVAL_EXPIRY_SECONDS)
  approvalExpiresInSeconds?: number;

  @ApiPropertyOptional({
    type: ApproversBody,
    description:
      "Who may decide this tool's calls. By default the member whose message started the Turn, owners and admins; `roles` and `members` name more " +
      'approvers, and `secondPerson: true` asks for someone other than the Turn\'s own member (who then cannot decide it). Whatever this names, nobody ' +
      "decides a call of a Turn that runs with rights wider than their own (the Turn's role and key scopes, its Vaults): they get 403",
  })
  @ValidateIf(isSent)
  approvers?: ApproverPolicy;
}

export class BotLimitsInput {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_BOT_LIMITS.maxSteps, default: DEFAULT_BOT_LIMITS.maxSteps, description: 'Most model steps per Turn' })
  @ValidateIf(isSent)
  @IsInt()
  @Min(1)
  @Max(MAX_BOT_LIMITS.maxSteps)
  maxSteps?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_BOT_LIMITS.maxSeconds,
    default: DEFAULT_BOT_LIMITS.maxSeconds,
    description: 'Most seconds a Turn may run, counted while it can run: not while it is paused, waits only for approvals or waits for a rate limit',
  })
  @ValidateIf(isSent)
  @IsInt()
  @Min(1)
  @Max(MAX_BOT_LIMITS.maxSeconds)
  maxSeconds?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_BOT_LIMITS.maxOutputTokens,
    default: DEFAULT_BOT_LIMITS.maxOutputTokens,
    description: 'Most output tokens a Turn may use, summed over its model steps',
  })
  @ValidateIf(isSent)
  @IsInt()
  @Min(1)
  @Max(MAX_BOT_LIMITS.maxOutputTokens)
  maxOutputTokens?: number;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_BOT_LIMITS.maxCostMicros,
    default: null,
    description: 'Most micros a run may cost (saved usage plus reservations, checked before every model call); null: none',
  })
  @ValidateIf((limits: BotLimitsInput) => limits.maxCostMicros !== undefined && limits.maxCostMicros !== null)
  @IsInt({ message: 'maxCostMicros must be an integer' })
  @Min(1, { message: 'maxCostMicros must be at least 1' })
  @Max(MAX_BOT_LIMITS.maxCostMicros, { message: 'maxCostMicros must be at most 2^53 − 1' })
  maxCostMicros?: number | null;
}

/** The checks of a sent `tools` array (create and update). */
function ValidBotTools(): PropertyDecorator {
  return applyDecorators(
    ValidateIf(isSent),
    IsArray(),
    ArrayMaxSize(MAX_BOT_TOOLS),
    // ValidateNested alone lets arrays of arrays through: each item must itself be an object.
    IsObject({ each: true, message: 'each of tools must be an object' }),
    ValidateNested({ each: true }),
    Type(() => BotToolInput),
  );
}

/** The checks of a sent `limits` object (create and update). */
function ValidBotLimits(): PropertyDecorator {
  return applyDecorators(ValidateIf(isSent), IsObject({ message: 'limits must be an object' }), ValidateNested(), Type(() => BotLimitsInput));
}

export class BotMemoryInput {
  @ApiProperty({ description: "Turns select context from the Bot's memory and emit `memory.read`" })
  @IsBoolean()
  enabled!: boolean;

  @ApiProperty({ description: 'After a Turn ends, a learning execution may add items' })
  @IsBoolean()
  learn!: boolean;

  @ApiPropertyOptional({
    enum: MEMORY_LEARN_ACCESS,
    default: 'member',
    description:
      'Who reads what a Turn teaches. `member` (the default): the Turn\'s member alone (`access: { kind: "members", ids: [member] }`). ' +
      '`bot`: every Turn of the Bot, but only when the learner read nothing narrower: its messages are all of the one Turn and every item that Turn selected is a `bot` item; otherwise still the member\'s alone.',
  })
  @ValidateIf(isSent)
  @IsIn(MEMORY_LEARN_ACCESS, { message: 'learnAccess must be member or bot' })
  learnAccess?: MemoryLearnAccess;
}

class BotMemoryBody extends BotMemoryInput {
  @ApiProperty({ enum: MEMORY_LEARN_ACCESS })
  declare learnAccess: MemoryLearnAccess;
}

/** A sent `memory` object as settings: `learnAccess` not sent is `member` (the whole object replaces the Bot's). */
export function toBotMemory(input: BotMemoryInput): BotMemorySettings {
  return { enabled: input.enabled, learn: input.learn, learnAccess: input.learnAccess ?? 'member' };
}

/** The checks of a sent `memory` object (create and update). */
function ValidBotMemory(): PropertyDecorator {
  return applyDecorators(ValidateIf(isSent), IsObject({ message: 'memory must be an object' }), ValidateNested(), Type(() => BotMemoryInput));
}

export class CreateBotRequest {
  @ApiProperty({ example: 'Support', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({ example: 'local/gpt-4o-mini', maxLength: 300, description: '`<provider name>/<model id>`; the provider must exist in the organization' })
  @IsString()
  @MaxLength(300)
  model!: string;

  @ApiPropertyOptional({ maxLength: 100_000, description: 'The system instructions; empty when absent' })
  @ValidateIf(isSent)
  @IsString()
  @MaxLength(100_000)
  instructions?: string;

  @ApiPropertyOptional({ type: [BotToolInput], maxItems: MAX_BOT_TOOLS })
  @ValidBotTools()
  tools?: BotToolInput[];

  @ApiPropertyOptional({ type: BotLimitsInput, description: 'The Turn limits; a limit left out takes its default' })
  @ValidBotLimits()
  limits?: BotLimitsInput;

  @ApiPropertyOptional({ type: BotMemoryInput, description: 'Memory switches; both false when absent (on update: absent keeps them)' })
  @ValidBotMemory()
  memory?: BotMemoryInput;
}

export class UpdateBotRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @ValidateIf(isSent)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ maxLength: 300, description: '`<provider name>/<model id>`; the provider must exist in the organization' })
  @ValidateIf(isSent)
  @IsString()
  @MaxLength(300)
  model?: string;

  @ApiPropertyOptional({ maxLength: 100_000 })
  @ValidateIf(isSent)
  @IsString()
  @MaxLength(100_000)
  instructions?: string;

  @ApiPropertyOptional({ type: [BotToolInput], maxItems: MAX_BOT_TOOLS, description: 'Replaces the whole tool set' })
  @ValidBotTools()
  tools?: BotToolInput[];

  @ApiPropertyOptional({ type: BotLimitsInput, description: 'Replaces the whole limits object: a limit left out takes its default again' })
  @ValidBotLimits()
  limits?: BotLimitsInput;

  @ApiPropertyOptional({ type: BotMemoryInput, description: 'Memory switches; both false when absent (on update: absent keeps them)' })
  @ValidBotMemory()
  memory?: BotMemoryInput;
}

export class AppToolDeclarationBody {
  @ApiProperty({ description: 'The name the model sees' })
  name!: string;

  @ApiProperty({ description: 'The name on the server' })
  serverName!: string;

  @ApiProperty({ description: 'The connection revision the declaration was saved at' })
  revision!: number;

  @ApiProperty({ description: 'The tool’s description as the server gave it when the declaration was saved (what the model reads)' })
  description!: string;
}

const NOT_ON_APP_ENTRIES = 'Absent on an `app` entry, which stands for several tools: they are in its `declarations`';

export class BotToolBody {
  @ApiPropertyOptional({ description: NOT_ON_APP_ENTRIES })
  name?: string;

  @ApiPropertyOptional({ description: NOT_ON_APP_ENTRIES })
  description?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `JSON Schema of the arguments. ${NOT_ON_APP_ENTRIES}` })
  parameters?: Record<string, unknown>;

  @ApiProperty({ enum: BOT_TOOL_KINDS, description: 'The effective kind: `client` when none was given (the built-in kinds; a node may register more)' })
  kind!: BotToolKind;

  @ApiPropertyOptional({ description: '`http` and `background` tools: the endpoint called' })
  url?: string;

  @ApiPropertyOptional({ enum: BOT_TOOL_RETRIES, description: '`http` and `background` tools, when given; absent means `unsafe`' })
  retry?: BotToolRetry;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { allOf: [{ $ref: '#/components/schemas/VaultReferenceBody' }], nullable: true },
    description: '`http` and `background` tools, when given: the header references as they were saved, and `null` for a literal value (stored sealed, never answered)',
  })
  headers?: Record<string, VaultReference | null>;

  @ApiPropertyOptional({ format: 'uuid', description: '`delegate` tools: the Bot a call starts a task of' })
  botId?: string;

  @ApiPropertyOptional({ description: '`delegate` tools, when given: whether the task is attached (default true)' })
  attached?: boolean;

  @ApiPropertyOptional({ format: 'uuid', description: '`app` tools: the connection' })
  connectionId?: string;

  @ApiPropertyOptional({ type: [String], description: '`app` tools, when given: the server names chosen' })
  tools?: string[];

  @ApiPropertyOptional({ type: [AppToolDeclarationBody], description: '`app` tools: the saved declarations, one per tool (the name the model sees, the server name, the connection revision it was saved at)' })
  declarations?: AppToolDeclarationBody[];

  @ApiPropertyOptional({ description: 'When given: `never`, `always` or `{ argument, in }`; absent means `never`' })
  approval?: ApprovalPolicy;

  @ApiPropertyOptional({ type: 'integer', description: 'When given: seconds until a pending approval expires' })
  approvalExpiresInSeconds?: number;

  @ApiPropertyOptional({ type: ApproversBody, description: 'When given: who may decide besides the Turn\'s member, owners and admins' })
  approvers?: ApproversBody;
}

export class BotLimitsBody {
  @ApiProperty({ type: 'integer', description: 'Most model steps per Turn' })
  maxSteps!: number;

  @ApiProperty({ type: 'integer', description: 'Most seconds a Turn may run, counted while it can run: not while it is paused, waits only for approvals or waits for a rate limit' })
  maxSeconds!: number;

  @ApiProperty({ type: 'integer', description: 'Most output tokens a Turn may use, summed over its model steps' })
  maxOutputTokens!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Most micros a run may cost; null: none' })
  maxCostMicros!: number | null;
}

export class BotBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: '`<provider name>/<model id>`' })
  model!: string;

  @ApiProperty()
  instructions!: string;

  @ApiProperty({ type: [BotToolBody] })
  tools!: BotToolBody[];

  @ApiProperty({ type: BotLimitsBody, description: 'The Turn limits, defaults filled in for those not set' })
  limits!: BotLimitsBody;

  @ApiProperty({ type: BotMemoryBody, description: 'Memory switches: `enabled` selects context from memory, `learn` learns after each Turn, stored for `learnAccess`' })
  memory!: BotMemoryBody;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class BotPage {
  @ApiProperty({ type: [BotBody] })
  data!: BotBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** What the model reads of a built-in tool that was given no description. */
const BUILT_IN_DESCRIPTIONS: Partial<Record<string, string>> = {
  delegate: 'Starts a task for another Bot and answers with its result',
  plan: 'Saves your plan: every step with its status',
  remind: 'Sets a reminder: the message is posted into this Chat at the given time or after the given delay',
};

/** Only the fields a tool definition has, whatever else the DTO instance carries. */
export function toBotTools(tools: readonly BotToolInput[]): BotTool[] {
  return tools.map((tool) => ({
    name: tool.name ?? (tool.kind === 'plan' ? 'update_plan' : tool.kind === 'remind' ? 'remind' : ''),
    description: tool.description ?? BUILT_IN_DESCRIPTIONS[tool.kind ?? 'client'] ?? '',
    // A delegate tool's parameters are fixed (the task's first message), and so are a plan and a remind tool's.
    parameters: tool.kind === 'delegate' ? DELEGATE_PARAMETERS : tool.kind === 'plan' ? PLAN_PARAMETERS : tool.kind === 'remind' ? REMIND_PARAMETERS : tool.parameters,
    ...(tool.botId === undefined ? {} : { botId: tool.botId }),
    ...(tool.attached === undefined ? {} : { attached: tool.attached }),
    ...(tool.connectionId === undefined ? {} : { connectionId: tool.connectionId }),
    ...(tool.tools === undefined ? {} : { tools: tool.tools }),
    ...(tool.kind === undefined ? {} : { kind: tool.kind }),
    ...(tool.url === undefined ? {} : { url: tool.url }),
    ...(tool.retry === undefined ? {} : { retry: tool.retry }),
    ...(tool.headers === undefined ? {} : { headers: tool.headers }),
    ...(tool.approval === undefined ? {} : { approval: tool.approval }),
    ...(tool.approvalExpiresInSeconds === undefined ? {} : { approvalExpiresInSeconds: tool.approvalExpiresInSeconds }),
    ...(tool.approvers === undefined ? {} : { approvers: tool.approvers }),
  }));
}

/** Only the limits that were sent. */
export function toBotLimits(limits: BotLimitsInput): BotLimits {
  return {
    ...(limits.maxSteps === undefined ? {} : { maxSteps: limits.maxSteps }),
    ...(limits.maxSeconds === undefined ? {} : { maxSeconds: limits.maxSeconds }),
    ...(limits.maxOutputTokens === undefined ? {} : { maxOutputTokens: limits.maxOutputTokens }),
    ...(limits.maxCostMicros === undefined ? {} : { maxCostMicros: limits.maxCostMicros }),
  };
}

function toBotToolBody(tool: BotTool): BotToolBody {
  if (tool.kind === 'app') {
    // An app entry has no name, description or parameters of its own (saved empty): its tools are its declarations.
    return {
      kind: 'app',
      connectionId: tool.connectionId!,
      ...(tool.tools === undefined ? {} : { tools: [...tool.tools] }),
      declarations: (tool.declarations ?? []).map((d) => ({ name: d.modelName, serverName: d.serverName, revision: d.revision, description: d.description })),
      ...(tool.approval === undefined ? {} : { approval: tool.approval }),
      ...(tool.approvalExpiresInSeconds === undefined ? {} : { approvalExpiresInSeconds: tool.approvalExpiresInSeconds }),
      ...(tool.approvers === undefined ? {} : { approvers: toApproversBody(tool.approvers) }),
    };
  }
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    kind: tool.kind ?? 'client',
    ...(tool.botId === undefined ? {} : { botId: tool.botId }),
    ...(tool.attached === undefined ? {} : { attached: tool.attached }),
    ...(tool.url === undefined ? {} : { url: tool.url }),
    ...(tool.retry === undefined ? {} : { retry: tool.retry }),
    ...(tool.headers === undefined ? {} : { headers: toReferenceBodies(tool.headers) }),
    ...(tool.approval === undefined ? {} : { approval: tool.approval }),
    ...(tool.approvalExpiresInSeconds === undefined ? {} : { approvalExpiresInSeconds: tool.approvalExpiresInSeconds }),
    ...(tool.approvers === undefined ? {} : { approvers: toApproversBody(tool.approvers) }),
  };
}

function toApproversBody(approvers: ApproverPolicy): ApproversBody {
  return {
    ...(approvers.roles === undefined ? {} : { roles: [...approvers.roles] }),
    ...(approvers.members === undefined ? {} : { members: [...approvers.members] }),
    ...(approvers.secondPerson === undefined ? {} : { secondPerson: approvers.secondPerson }),
  };
}

/** Lists every field explicitly, so a new column never leaks by default. */
export function toBotBody(bot: BotView): BotBody {
  return {
    id: bot.id,
    name: bot.name,
    model: bot.model,
    instructions: bot.instructions,
    tools: bot.tools.map(toBotToolBody),
    memory: { enabled: bot.memory.enabled, learn: bot.memory.learn, learnAccess: bot.memory.learnAccess ?? 'member' },
    limits: { maxSteps: bot.limits.maxSteps, maxSeconds: bot.limits.maxSeconds, maxOutputTokens: bot.limits.maxOutputTokens, maxCostMicros: bot.limits.maxCostMicros },
    createdAt: bot.createdAt.toISOString(),
    updatedAt: bot.updatedAt.toISOString(),
  };
}

/** References answered as they were given: their three fields, nothing else. */
function toReferenceBodies(headers: Readonly<Record<string, ToolHeaderValue>>): Record<string, VaultReference | null> {
  // A literal is never answered: stored as null, and a string here would be one not yet sealed.
  return Object.fromEntries(Object.entries(headers).map(([name, ref]) => [name, ref !== null && typeof ref === 'object' ? toVaultReferenceBody(ref) : null]));
}
