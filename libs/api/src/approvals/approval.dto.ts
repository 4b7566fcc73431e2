import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { APPROVAL_DECISIONS, APPROVAL_STATES, type ApprovalDecision, type ApprovalState, type ApprovalView } from '@openbot/features';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';

export class ApprovalDecisionRequest {
  @ApiProperty({ enum: APPROVAL_DECISIONS })
  @IsIn(APPROVAL_DECISIONS, { message: `decision must be one of ${APPROVAL_DECISIONS.join(', ')}` })
  decision!: ApprovalDecision;

  @ApiPropertyOptional({ maxLength: 2000, description: 'Why; a denial gives it to the model with its tool result' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string;
}

class DecidedByBody {
  @ApiProperty({ enum: ['member', 'service'] })
  kind!: 'member' | 'service';

  @ApiProperty({ format: 'uuid' })
  id!: string;
}

export class ApprovalBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  executionId!: string;

  @ApiProperty({ format: 'uuid' })
  chatId!: string;

  @ApiProperty({ format: 'uuid' })
  turnId!: string;

  @ApiProperty()
  callId!: string;

  @ApiProperty()
  toolName!: string;

  @ApiProperty({ description: "The call's arguments as the model sent them (JSON text)" })
  arguments!: string;

  @ApiProperty({ enum: APPROVAL_STATES })
  state!: ApprovalState;

  @ApiProperty({ format: 'date-time' })
  requestedAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  decidedAt!: string | null;

  @ApiProperty({ type: DecidedByBody, nullable: true })
  decidedBy!: DecidedByBody | null;

  @ApiProperty({ type: String, nullable: true })
  reason!: string | null;
}

export class ApprovalPage {
  @ApiProperty({ type: [ApprovalBody] })
  data!: ApprovalBody[];

  @ApiProperty({ type: String, nullable: true, description: 'Continues with older approvals' })
  next!: string | null;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

/** Lists every field explicitly, so a new column never leaks by default. */
export function toApprovalBody(a: ApprovalView): ApprovalBody {
  return {
    id: a.id,
    executionId: a.executionId,
    chatId: a.chatId,
    turnId: a.turnId,
    callId: a.callId,
    toolName: a.toolName,
    arguments: a.arguments,
    state: a.state,
    requestedAt: iso(a.requestedAt)!,
    expiresAt: iso(a.expiresAt),
    decidedAt: iso(a.decidedAt),
    decidedBy: a.decidedBy === null ? null : { kind: a.decidedBy.kind, id: a.decidedBy.id },
    reason: a.reason,
  };
}
