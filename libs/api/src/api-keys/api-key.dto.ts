import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ApiKeyView } from '@openbot/platform';
import { PERMISSIONS } from '@openbot/domain';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';

export class CreateApiKeyRequest {
  @ApiProperty({ example: 'CI deploys', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'When the key stops working; must be in the future' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: string;

  @ApiPropertyOptional({
    enum: PERMISSIONS,
    isArray: true,
    description: "Limits the key to these permissions; each must be one the calling credential has (a key never widens the rights of the credential that makes it). " +
      "Absent: the calling credential's rights — the member's full rights, following later role changes, when the caller is a session or an unscoped key; the calling key's effective rights as scopes when it is a scoped key.",
  })
  @ValidateIf((_, value) => value !== undefined)
  @IsArray()
  @ArrayMaxSize(PERMISSIONS.length)
  @IsIn(PERMISSIONS, { each: true, message: `each of scopes must be one of: ${PERMISSIONS.join(', ')}` })
  scopes?: string[];
}

export class ApiKeyBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ format: 'uuid', description: 'The member the key acts as' })
  memberId!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Updated at most once a minute' })
  lastUsedAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt!: string | null;

  @ApiProperty({ enum: PERMISSIONS, isArray: true, nullable: true, description: "The permissions the key is limited to; null: its member's full rights" })
  scopes!: string[] | null;
}

export class CreatedApiKeyBody extends ApiKeyBody {
  @ApiProperty({ description: 'Shown once; only its hash is stored' })
  secret!: string;
}

export class ApiKeyPage {
  @ApiProperty({ type: [ApiKeyBody] })
  data!: ApiKeyBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** Lists every field explicitly, so a new column never leaks by default. */
export function toApiKeyBody(key: ApiKeyView): ApiKeyBody {
  return {
    id: key.id,
    name: key.name,
    memberId: key.memberId,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    scopes: key.scopes === null ? null : [...key.scopes],
  };
}
