import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_MEMORY_CONTENT_CHARS, MAX_MEMORY_SOURCES, MAX_MEMORY_TAGS, MEMORY_SOURCE_TYPES, MEMORY_STATUSES, type MemoryAccess, type MemoryItemView, type MemoryItemWithContent, type MemorySource, type MemorySourceType, type MemoryStatus } from '@openbot/features';
import { MEMBER_ROLES, type MemberRole } from '@openbot/domain';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, Matches, MaxLength, MinLength, ValidateIf, ValidateNested } from 'class-validator';

const isSent = (_object: object, value: unknown): boolean => value !== undefined;
const ACCESS_KINDS = ['bot', 'members', 'roles'] as const;

export class MemoryAccessInput {
  @ApiProperty({ enum: ACCESS_KINDS, description: '`bot`: every Turn of the Bot; `members`: Turns of the members named; `roles`: Turns of members with these roles' })
  @IsIn(ACCESS_KINDS, { message: 'kind must be bot, members or roles' })
  kind!: (typeof ACCESS_KINDS)[number];

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: '`members` only: the member IDs admitted' })
  @ValidateIf((a: MemoryAccessInput) => a.kind === 'members' || a.ids !== undefined)
  @IsArray()
  @IsString({ each: true })
  ids?: string[];

  @ApiPropertyOptional({ enum: MEMBER_ROLES, isArray: true, description: '`roles` only: the roles admitted' })
  @ValidateIf((a: MemoryAccessInput) => a.kind === 'roles' || a.roles !== undefined)
  @IsArray()
  @IsIn(MEMBER_ROLES, { each: true, message: 'each role must be owner, admin, member or viewer' })
  roles?: MemberRole[];
}

export class MemorySourceInput {
  @ApiProperty({ enum: MEMORY_SOURCE_TYPES })
  @IsIn(MEMORY_SOURCE_TYPES, { message: 'type must be chat, turn, file or url' })
  type!: MemorySourceType;

  @ApiProperty({ description: 'The Chat, Turn or file ID, or the URL' })
  @IsString()
  @MaxLength(2048)
  id!: string;
}

export class CreateMemoryRequest {
  @ApiProperty({ minLength: 1, maxLength: MAX_MEMORY_CONTENT_CHARS, description: 'Sealed at rest; its words are indexed only as keyed hashes' })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_MEMORY_CONTENT_CHARS)
  @Matches(/\S/, { message: 'content must not be blank' })
  content!: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_MEMORY_TAGS, description: 'Lower-cased; 1 to 64 letters, digits, "_", ".", ":" or "-" each' })
  @ValidateIf(isSent)
  @IsArray()
  @ArrayMaxSize(MAX_MEMORY_TAGS)
  @IsString({ each: true })
  tags?: string[];

  @ApiPropertyOptional({ type: MemoryAccessInput, description: 'Who the item is selected for; default `{ "kind": "bot" }`' })
  @ValidateIf(isSent)
  @IsObject({ message: 'access must be an object' })
  @ValidateNested()
  @Type(() => MemoryAccessInput)
  access?: MemoryAccessInput;

  @ApiPropertyOptional({ type: [MemorySourceInput], maxItems: MAX_MEMORY_SOURCES, description: 'Where it came from: an item whose source a reader can no longer see is not selected for them' })
  @ValidateIf(isSent)
  @IsArray()
  @ArrayMaxSize(MAX_MEMORY_SOURCES)
  @ValidateNested({ each: true })
  @Type(() => MemorySourceInput)
  sources?: MemorySourceInput[];
}

export class UpdateMemoryRequest {
  @ApiPropertyOptional({ type: [String], maxItems: MAX_MEMORY_TAGS, description: 'Replaces the tags; the sealed content is not touched' })
  @ValidateIf(isSent)
  @IsArray()
  @ArrayMaxSize(MAX_MEMORY_TAGS)
  @IsString({ each: true })
  tags?: string[];

  @ApiPropertyOptional({ enum: MEMORY_STATUSES, description: 'An archived item is never selected' })
  @ValidateIf(isSent)
  @IsIn(MEMORY_STATUSES, { message: 'status must be active or archived' })
  status?: MemoryStatus;
}

class MemoryAccessBody {
  @ApiProperty({ enum: ACCESS_KINDS })
  kind!: string;

  @ApiPropertyOptional({ type: [String], format: 'uuid' })
  ids?: string[];

  @ApiPropertyOptional({ enum: MEMBER_ROLES, isArray: true })
  roles?: string[];
}

class MemorySourceBody {
  @ApiProperty({ enum: MEMORY_SOURCE_TYPES })
  type!: string;

  @ApiProperty()
  id!: string;
}

export class MemoryBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  botId!: string;

  @ApiProperty({ type: [String] })
  tags!: string[];

  @ApiProperty({ type: MemoryAccessBody })
  access!: MemoryAccessBody;

  @ApiProperty({ type: [MemorySourceBody] })
  sources!: MemorySourceBody[];

  @ApiProperty({ enum: MEMORY_STATUSES })
  status!: MemoryStatus;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class MemoryWithContentBody extends MemoryBody {
  @ApiProperty()
  content!: string;
}

export class MemoryPage {
  @ApiProperty({ type: [MemoryBody] })
  data!: MemoryBody[];

  @ApiProperty({ type: String, nullable: true, description: 'The cursor of the next page; null on the last' })
  next!: string | null;
}

export function toMemoryAccess(input: MemoryAccessInput | undefined): MemoryAccess {
  if (input === undefined || input.kind === 'bot') return { kind: 'bot' };
  return input.kind === 'members' ? { kind: 'members', ids: input.ids ?? [] } : { kind: 'roles', roles: input.roles ?? [] };
}

export function toMemorySources(input: readonly MemorySourceInput[] | undefined): MemorySource[] {
  return (input ?? []).map((s) => ({ type: s.type, id: s.id }));
}

export function toMemoryBody(item: MemoryItemView): MemoryBody {
  return {
    id: item.id,
    botId: item.botId,
    tags: [...item.tags],
    access: { ...item.access } as MemoryAccessBody,
    sources: item.sources.map((s) => ({ type: s.type, id: s.id })),
    status: item.status,
    createdAt: item.createdAt.toISOString(),
    updatedAt: item.updatedAt.toISOString(),
  };
}

export function toMemoryWithContentBody(item: MemoryItemWithContent): MemoryWithContentBody {
  return { ...toMemoryBody(item), content: item.content };
}
