import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BUDGET_PERIODS, BUDGET_SCOPE_KINDS, CREDIT_ENTRY_KINDS, PRICE_SETTERS, type BudgetPeriod, type BudgetScopeKind, type BudgetView, type CreditEntryView, type PriceSetter, type PriceView, type RateLimitView } from '@openbot/platform';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Max, MaxLength, Min, MinLength, NotEquals, ValidateNested } from 'class-validator';

const MAX_MICROS = Number.MAX_SAFE_INTEGER;
const integer = (name: string) => IsInt({ message: `${name} must be an integer` });
const atMost = (name: string) => Max(MAX_MICROS, { message: `${name} must be at most 2^53 − 1` });

export class SetPriceRequest {
  @ApiProperty({ minimum: 0, maximum: MAX_MICROS, description: 'Micros per million uncached input tokens' })
  @integer('inputPerMillionMicros')
  @Min(0, { message: 'inputPerMillionMicros must not be negative' })
  @atMost('inputPerMillionMicros')
  inputPerMillionMicros!: number;

  @ApiProperty({ minimum: 0, maximum: MAX_MICROS, description: 'Micros per million output tokens' })
  @integer('outputPerMillionMicros')
  @Min(0, { message: 'outputPerMillionMicros must not be negative' })
  @atMost('outputPerMillionMicros')
  outputPerMillionMicros!: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_MICROS, description: 'Micros per million input tokens read from a cache; defaults to the input price' })
  @IsOptional()
  @integer('cachedInputPerMillionMicros')
  @Min(0, { message: 'cachedInputPerMillionMicros must not be negative' })
  @atMost('cachedInputPerMillionMicros')
  cachedInputPerMillionMicros?: number;

  @ApiPropertyOptional({ format: 'date-time', description: 'When the version takes effect; defaults to now, may not be in the past' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'effectiveFrom must be an ISO 8601 time' })
  effectiveFrom?: string;
}

export class PriceBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'local/gpt-test' })
  model!: string;

  @ApiProperty()
  inputPerMillionMicros!: number;

  @ApiProperty()
  outputPerMillionMicros!: number;

  @ApiProperty()
  cachedInputPerMillionMicros!: number;

  @ApiProperty({ format: 'date-time' })
  effectiveFrom!: string;

  @ApiProperty({
    enum: PRICE_SETTERS,
    description:
      'Who set the version: the organization, the platform administrator, or the operator’s default price (`OPENBOT_DEFAULT_PRICE`, written when it first priced a call). ' +
      'Once the organization has credits only `platform` and `default` versions price its calls.',
  })
  setBy!: PriceSetter;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class ListedPriceBody extends PriceBody {
  @ApiProperty({
    description:
      'Whether this is the version a call of its model starting now is priced at (at most one per model): the latest `effectiveFrom` not after now; ' +
      'once the organization has credits only a `platform` version, else the latest `default` one. A version dated in the future is not in force yet.',
  })
  inForce!: boolean;
}

export class PricePage {
  @ApiProperty({ type: [ListedPriceBody] })
  data!: ListedPriceBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toPriceBody(price: PriceView): PriceBody {
  return { ...price, effectiveFrom: new Date(price.effectiveFrom).toISOString(), createdAt: new Date(price.createdAt).toISOString() };
}

export class GrantCreditsRequest {
  @ApiProperty({ description: 'Micros: positive is a grant, negative an adjustment; 0 is refused', minimum: -MAX_MICROS, maximum: MAX_MICROS })
  @integer('amountMicros')
  @NotEquals(0, { message: 'amountMicros must not be 0' })
  @Min(-MAX_MICROS, { message: 'amountMicros must be at least −(2^53 − 1)' })
  @atMost('amountMicros')
  amountMicros!: number;

  @ApiProperty({ minLength: 1, maxLength: 500 })
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  reason!: string;
}

export class CreditEntryBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'Micros; a charge is negative' })
  amountMicros!: number;

  @ApiProperty({ enum: CREDIT_ENTRY_KINDS })
  kind!: string;

  @ApiProperty()
  reason!: string;

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'The usage record a charge is for (one charge per confirmed record)' })
  usageRecordId!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class CreditEntryPage {
  @ApiProperty({ type: [CreditEntryBody] })
  data!: CreditEntryBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toCreditEntryBody(entry: CreditEntryView): CreditEntryBody {
  return { ...entry, createdAt: new Date(entry.createdAt).toISOString() };
}

export class CreditsBody {
  @ApiProperty({ description: "The ledger's sum in micros; it may fall below 0" })
  balanceMicros!: number;

  @ApiProperty({ description: 'Micros held by calls in flight and by unknown usage' })
  reservedMicros!: number;
}

export class BudgetScopeInput {
  @ApiProperty({ enum: BUDGET_SCOPE_KINDS })
  @IsIn(BUDGET_SCOPE_KINDS, { message: `scope.kind must be one of ${BUDGET_SCOPE_KINDS.join(', ')}` })
  kind!: BudgetScopeKind;

  @ApiPropertyOptional({ format: 'uuid', description: 'The Bot or member; required for `bot` and `member`, refused for `organization`' })
  @IsOptional()
  @IsString({ message: 'scope.id must be a string' })
  id?: string;
}

export class CreateBudgetRequest {
  @ApiProperty({ type: BudgetScopeInput })
  @IsDefined({ message: 'scope is required' })
  @IsObject({ message: 'scope must be an object' })
  @ValidateNested()
  @Type(() => BudgetScopeInput)
  scope!: BudgetScopeInput;

  @ApiProperty({ enum: BUDGET_PERIODS, description: 'UTC calendar day or month, or `total` (ever)' })
  @IsIn(BUDGET_PERIODS, { message: `period must be one of ${BUDGET_PERIODS.join(', ')}` })
  period!: BudgetPeriod;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_MICROS, description: 'A money budget in micros (exactly one of limitMicros and limitTokens)' })
  @IsOptional()
  @integer('limitMicros')
  @Min(1, { message: 'limitMicros must be at least 1' })
  @atMost('limitMicros')
  limitMicros?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_MICROS, description: 'A token quota: input plus output tokens' })
  @IsOptional()
  @integer('limitTokens')
  @Min(1, { message: 'limitTokens must be at least 1' })
  @atMost('limitTokens')
  limitTokens?: number;
}

export class BudgetScopeBody {
  @ApiProperty({ enum: BUDGET_SCOPE_KINDS })
  kind!: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  id!: string | null;
}

export class BudgetBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: BudgetScopeBody })
  scope!: BudgetScopeBody;

  @ApiProperty({ enum: BUDGET_PERIODS })
  period!: string;

  @ApiProperty({ type: Number, nullable: true })
  limitMicros!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  limitTokens!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Known cost in the current period (money budgets)' })
  spentMicros!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Held by calls in flight and unknown usage (money budgets)' })
  reservedMicros!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Confirmed input plus output tokens in the current period (quotas)' })
  spentTokens!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Tokens held by calls in flight and unknown usage (quotas)' })
  reservedTokens!: number | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class BudgetPage {
  @ApiProperty({ type: [BudgetBody] })
  data!: BudgetBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toBudgetBody(budget: BudgetView): BudgetBody {
  return { ...budget, scope: { ...budget.scope }, createdAt: new Date(budget.createdAt).toISOString() };
}

export class CreateRateLimitRequest {
  @ApiProperty({ type: BudgetScopeInput })
  @IsDefined({ message: 'scope is required' })
  @IsObject({ message: 'scope must be an object' })
  @ValidateNested()
  @Type(() => BudgetScopeInput)
  scope!: BudgetScopeInput;

  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000_000, description: 'Model calls per minute' })
  @IsOptional()
  @integer('requestsPerMinute')
  @Min(1, { message: 'requestsPerMinute must be at least 1' })
  @Max(1_000_000_000, { message: 'requestsPerMinute must be at most 1,000,000,000' })
  requestsPerMinute?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1_000_000_000, description: 'Tokens per minute: input estimates when calls start, corrected by confirmed usage' })
  @IsOptional()
  @integer('tokensPerMinute')
  @Min(1, { message: 'tokensPerMinute must be at least 1' })
  @Max(1_000_000_000, { message: 'tokensPerMinute must be at most 1,000,000,000' })
  tokensPerMinute?: number;
}

export class RateLimitBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: BudgetScopeBody })
  scope!: BudgetScopeBody;

  @ApiProperty({ type: Number, nullable: true })
  requestsPerMinute!: number | null;

  @ApiProperty({ type: Number, nullable: true })
  tokensPerMinute!: number | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class RateLimitPage {
  @ApiProperty({ type: [RateLimitBody] })
  data!: RateLimitBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toRateLimitBody(limit: RateLimitView): RateLimitBody {
  return { ...limit, scope: { ...limit.scope }, createdAt: new Date(limit.createdAt).toISOString() };
}
