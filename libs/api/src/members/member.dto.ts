import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MEMBER_ROLES, type MemberRole } from '@openbot/domain';
import type { MemberView } from '@openbot/platform';
import { IsIn, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';

export class AddMemberRequest {
  @ApiProperty({ enum: MEMBER_ROLES, description: 'Only an owner may add an owner' })
  @IsIn(MEMBER_ROLES, { message: `role must be one of: ${MEMBER_ROLES.join(', ')}` })
  role!: MemberRole;

  @ApiPropertyOptional({ maxLength: 200 })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name?: string;
}

export class ChangeMemberRoleRequest {
  @ApiProperty({ enum: MEMBER_ROLES })
  @IsIn(MEMBER_ROLES, { message: `role must be one of: ${MEMBER_ROLES.join(', ')}` })
  role!: MemberRole;
}

export class MemberBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: MEMBER_ROLES })
  role!: string;

  @ApiProperty({ type: String, nullable: true })
  name!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'From SSO' })
  email!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

class FirstApiKeyBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ description: 'Shown once; only its hash is stored' })
  secret!: string;
}

export class AddedMemberBody {
  @ApiProperty({ type: MemberBody })
  member!: MemberBody;

  @ApiProperty({ type: FirstApiKeyBody })
  apiKey!: FirstApiKeyBody;
}

export class MemberPage {
  @ApiProperty({ type: [MemberBody] })
  data!: MemberBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toMemberBody(member: MemberView): MemberBody {
  return { id: member.id, role: member.role, name: member.name, email: member.email, createdAt: new Date(member.createdAt).toISOString() };
}
