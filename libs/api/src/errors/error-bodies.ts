import { ApiProperty } from '@nestjs/swagger';

/** The public error shapes of docs/http-api.md, as OpenAPI schemas. */
export class DeclaredErrorBody {
  @ApiProperty({ description: 'Stable error type name', example: 'ApiKeyNotFound' })
  type!: string;

  @ApiProperty({ description: 'Human-readable explanation, safe to show' })
  message!: string;
}

export class InputIssueBody {
  @ApiProperty({ description: 'Dotted path of the offending field (`tools.0.name`); empty for the whole body' })
  path!: string;

  @ApiProperty()
  message!: string;
}

export class InvalidInputBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['InvalidInput'] })
  declare type: string;

  @ApiProperty({ type: [InputIssueBody] })
  issues!: InputIssueBody[];
}

export class RequestFailedBody {
  @ApiProperty({ enum: ['RequestFailed'] })
  type!: 'RequestFailed';

  @ApiProperty({ enum: ['internal', 'unavailable', 'timeout'] })
  category!: 'internal' | 'unavailable' | 'timeout';

  @ApiProperty({ description: 'Also sent as the `openbot-error-id` header; names the sealed error record' })
  errorId!: string;
}

export class BudgetExceededBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['BudgetExceeded'] })
  declare type: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The exhausted budget; null when the credits are exhausted' })
  budgetId!: string | null;
}

export class AppExistsBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['AppExists'] })
  declare type: string;

  @ApiProperty({ format: 'uuid', description: 'The App the organization already registered from this URL' })
  appId!: string;
}

export class BotUsingProviderBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;
}

export class ModelProviderInUseBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['ModelProviderInUse'] })
  declare type: string;

  @ApiProperty({ type: [BotUsingProviderBody], description: 'Bots whose model names this provider (at most 20, by ID); change their model or delete them first' })
  bots!: BotUsingProviderBody[];

  @ApiProperty({ description: 'How many Bots name this provider' })
  botCount!: number;
}

export class ModelNotPricedBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['ModelNotPriced'] })
  declare type: string;

  @ApiProperty({ description: 'The model (`<provider>/<model id>`) the platform has not priced for this organization, which spends platform credits' })
  model!: string;
}

const ORGANIZATION_LIMITS = ['apiKeys', 'streams', 'queuedTurnsPerChat', 'toolCallsPerStep', 'runningTurns', 'fileBytes', 'memoryItems'];

export class LimitReachedBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['LimitReached'] })
  declare type: string;

  @ApiProperty({ enum: ORGANIZATION_LIMITS, description: 'The organization limit reached (`GET /v1/limits`)' })
  limit!: string;

  @ApiProperty({ description: "The limit's value" })
  value!: number;
}

export class OrganizationRateLimitedBody extends DeclaredErrorBody {
  @ApiProperty({ enum: ['RateLimited'] })
  declare type: string;

  @ApiProperty({ enum: ORGANIZATION_LIMITS, required: false, description: 'The organization limit that refused (`GET /v1/limits`); absent for the other rate limits' })
  limit?: string;
}
