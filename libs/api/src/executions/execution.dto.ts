import { ERROR_CATEGORIES } from '@openbot/domain';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EXECUTION_STATES } from '@openbot/domain';
import { IsIn, IsObject, IsOptional } from 'class-validator';

export class ResourceRefBody {
  @ApiProperty({ example: 'turn' })
  type!: string;

  @ApiProperty()
  id!: string;
}

export class ExecutionLimitsBody {
  @ApiProperty({ type: 'integer' })
  maxSteps!: number;

  @ApiProperty({ type: 'integer' })
  maxSeconds!: number;

  @ApiProperty({ type: 'integer' })
  maxOutputTokens!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Null: no cost limit' })
  maxCostMicros!: number | null;
}

export class ExecutionSpentBody {
  @ApiProperty({ type: 'integer' })
  steps!: number;

  @ApiProperty({ type: 'integer', description: 'Counted only while it could run: not while it or a parent is paused, nor while it waits for an approval or a rate limit' })
  seconds!: number;

  @ApiProperty({ type: 'integer' })
  outputTokens!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The known cost of its model calls and of its tasks\' (each call counted once), in micros' })
  costMicros!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Model calls of it and its tasks whose cost is not known yet (unknown usage)' })
  unknownCostCalls!: number | null;
}

/** What a model provider answered when it refused a call, safe to show (decision 082). */
export class FailureDetailBody {
  @ApiProperty({ type: 'integer', nullable: true, example: 404, description: 'The HTTP status the provider answered; null for an error inside its stream' })
  status!: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'model_not_found', description: 'The provider’s own error code or type; null when it named none' })
  code!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'The model `gpt-4o-mnii` does not exist or you do not have access to it.',
    description: 'The first line of the provider’s message, at most 200 characters, with keys, tokens, URLs and e-mail addresses replaced by `[redacted]`, `[url]`, `[email]`',
  })
  message!: string | null;
}

export class ExecutionBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'The workflow that runs it, e.g. `turn`' })
  kind!: string;

  @ApiProperty({ enum: EXECUTION_STATES })
  state!: string;

  @ApiProperty({ description: 'The number of the current owner; each takeover adds one' })
  generation!: number;

  @ApiProperty({ type: ResourceRefBody, nullable: true })
  resource!: ResourceRefBody | null;

  @ApiProperty({ description: 'Paused: no new sends until it is resumed; its time does not count meanwhile' })
  paused!: boolean;

  @ApiProperty({ type: ExecutionLimitsBody, nullable: true, description: 'Null for work without limits' })
  limits!: ExecutionLimitsBody | null;

  @ApiProperty({ type: ExecutionSpentBody, nullable: true, description: 'Null for work without limits' })
  spent!: ExecutionSpentBody | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['max-steps', 'max-seconds', 'max-output-tokens', 'max-cost', 'budget'],
    description: 'The limit that ended it; null for a final answer, a length cut-off, a cancel or a stop decision',
  })
  stop!: string | null;

  @ApiPropertyOptional({ format: 'uuid', description: 'Set when it failed: the sealed error record' })
  errorId?: string;

  @ApiPropertyOptional({
    enum: ERROR_CATEGORIES,
    description:
      'Set when it failed. `forbidden`: its identity stopped being valid (a revoked key, a removed member, a lost permission); ' +
      '`unavailable`, `timeout`, `rate-limited`, `invalid-request`, `context-too-long`: a model call failed for that reason after its retries (then `detail` says what the provider answered); ' +
      '`timeout` with `stop: "max-seconds"`: its own time limit; `internal`: anything else',
  })
  category?: string;

  @ApiPropertyOptional({ type: FailureDetailBody, description: 'Set when a model provider answered the call it failed of: what it said, scrubbed (decision 082)' })
  detail?: FailureDetailBody;
}

export class ExecutionStateBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: EXECUTION_STATES })
  state!: string;
}

export class PausedStateBody extends ExecutionStateBody {
  @ApiProperty()
  paused!: boolean;
}

export class ChildExecutionBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'The workflow that runs it, e.g. `chat.background-tool`' })
  kind!: string;

  @ApiProperty({ enum: EXECUTION_STATES })
  state!: string;

  @ApiProperty({ description: 'An attached task ends before its parent and is cancelled and paused with it; a detached one may outlive it' })
  attached!: boolean;

  @ApiProperty({ type: ResourceRefBody, nullable: true })
  resource!: ResourceRefBody | null;
}

export class ChildExecutionPage {
  @ApiProperty({ type: [ChildExecutionBody] })
  data!: ChildExecutionBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export class DecisionRequest {
  @ApiProperty({ enum: ['succeeded', 'failed', 'stop'] })
  @IsIn(['succeeded', 'failed', 'stop'])
  decision!: 'succeeded' | 'failed' | 'stop';

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'With `succeeded`: the result of the lost call' })
  @IsOptional()
  @IsObject()
  result?: Record<string, unknown>;
}

/** The marker of events retention removed (decision 041). */
export class PrunedMarkerBody {
  @ApiProperty({ type: [String], example: ['text.delta'], description: 'The event types removed' })
  types!: string[];

  @ApiProperty({ format: 'date-time', description: 'When they were removed' })
  at!: string;
}

export class ExecutionEventBody {
  @ApiProperty({
    description:
      'Starts at 1 and rises by exactly 1 within an execution, except where retention removed `text.delta` events of an ended execution ' +
      '(its `execution.ended` event then carries `pruned`)',
  })
  seq!: number;

  @ApiProperty({
    example: 'execution.ended',
    description: 'What happened. Every execution: `execution.paused` and `execution.resumed` when a pause or a resume is recorded, and last `execution.ended`',
  })
  type!: string;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiPropertyOptional()
  step?: number;

  @ApiPropertyOptional({
    description:
      "The model call's attempt within its `step`, from 1. A new `model.started` of the same step with a higher attempt replaces the earlier attempt's " +
      '`text.delta` texts: drop them (the typed client\'s `ReplyText` does)',
  })
  attempt?: number;

  @ApiPropertyOptional({
    enum: ERROR_CATEGORIES,
    description:
      'On `model.failed`: why the attempt failed (`unavailable`, `timeout`, `rate-limited`, `invalid-request`, `context-too-long`); ' +
      'on a failed `execution.ended`: the execution’s category, the model call’s own category when it failed of one (decision 082)',
  })
  category?: string;

  @ApiPropertyOptional({ description: 'On `model.failed`: true when the call is tried again as a new attempt (a new `model.started` follows)' })
  retrying?: boolean;

  @ApiPropertyOptional({
    type: FailureDetailBody,
    description: 'On `model.failed` and a failed `execution.ended`: what the model provider answered (status, its error code, the first line of its message), scrubbed; absent when it did not answer',
  })
  detail?: FailureDetailBody;

  @ApiPropertyOptional({
    enum: ['rate-limit', 'provider-rate-limit'],
    description:
      'On `model.waiting`: why the model call waits before it sends again. `rate-limit`: a rate limit of the organization (`/v1/rate-limits`) has no room yet, nothing was sent; ' +
      '`provider-rate-limit`: the provider answered 429 (see the `model.failed` just before) and its `Retry-After` (at most 30 s) is waited out',
  })
  reason?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'On `model.waiting`: when the call is sent again, at the earliest' })
  until?: string;

  @ApiPropertyOptional({ type: 'integer', description: 'On `model.waiting`: the same wait in whole seconds from the event’s `at`' })
  retryAfter?: number;

  @ApiPropertyOptional({
    type: PrunedMarkerBody,
    description: 'Only on `execution.ended`, when retention removed some of this execution’s events (docs: "Operating > Retention")',
  })
  pruned?: PrunedMarkerBody;
}

export class EventPageBody {
  @ApiProperty({ type: [ExecutionEventBody], description: 'Events after `after`, oldest first; each may carry more fields by type' })
  events!: ExecutionEventBody[];

  @ApiProperty({ description: 'Pass as `after` next time' })
  next!: number;

  @ApiProperty({ description: 'True once the final event (`execution.ended`) has been returned' })
  ended!: boolean;
}

export class PlanStepBody {
  @ApiProperty()
  title!: string;

  @ApiProperty({ enum: ['pending', 'in_progress', 'done', 'skipped'] })
  status!: string;
}

export class PlanBody {
  @ApiProperty({ type: [PlanStepBody] })
  steps!: PlanStepBody[];

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}
