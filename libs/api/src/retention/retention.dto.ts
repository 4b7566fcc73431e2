import { ApiProperty } from '@nestjs/swagger';
import { type RetentionView } from '@openbot/features';
import { MAX_RETENTION_DAYS } from '@openbot/platform';
import { IsDefined, IsInt, Max, Min, ValidateIf } from 'class-validator';

/** Validates a field unless it is an explicit null: an absent field fails IsDefined, a number the range checks. */
const sentUnlessNull = (field: 'textDeltaDays' | 'callPayloadDays') => (body: SetRetentionRequest) => body[field] !== null;

/** `PUT` replaces both settings, so both are required; null returns one to the platform default. */
export class SetRetentionRequest {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_RETENTION_DAYS,
    example: 7,
    description: 'Days after an execution ended that its `text.delta` events are kept; required; null: the platform default; absent: 400 naming this field. Above the platform’s ceiling (`OPENBOT_RETENTION_MAX_DAYS`): 400 naming this field',
  })
  @ValidateIf(sentUnlessNull('textDeltaDays'))
  @IsDefined({ message: 'textDeltaDays is required: send a number of days, or null for the platform default' })
  @IsInt()
  @Min(1)
  @Max(MAX_RETENTION_DAYS)
  textDeltaDays!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_RETENTION_DAYS,
    example: 30,
    description: 'Days after an execution ended that its calls’ saved results (model answers, tool answers) are kept; required; null: the platform default; absent: 400 naming this field. Above the platform’s ceiling (`OPENBOT_RETENTION_MAX_DAYS`): 400 naming this field',
  })
  @ValidateIf(sentUnlessNull('callPayloadDays'))
  @IsDefined({ message: 'callPayloadDays is required: send a number of days, or null for the platform default' })
  @IsInt()
  @Min(1)
  @Max(MAX_RETENTION_DAYS)
  callPayloadDays!: number | null;
}

export class EffectiveRetentionBody {
  @ApiProperty({ type: 'integer', description: 'Days `text.delta` events are kept after the end' })
  textDeltaDays!: number;

  @ApiProperty({ type: 'integer', description: 'Days call results are kept after the end' })
  callPayloadDays!: number;
}

export class RetentionBody {
  @ApiProperty({ type: 'integer', nullable: true, description: 'The organization’s own setting; null: the platform default applies' })
  textDeltaDays!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The organization’s own setting; null: the platform default applies' })
  callPayloadDays!: number | null;

  @ApiProperty({ type: EffectiveRetentionBody, description: 'What applies now: the organization’s settings, else the platform defaults, never above the platform’s ceiling' })
  effective!: EffectiveRetentionBody;
}

export function toRetentionBody(view: RetentionView): RetentionBody {
  return { textDeltaDays: view.textDeltaDays, callPayloadDays: view.callPayloadDays, effective: { ...view.effective } };
}
