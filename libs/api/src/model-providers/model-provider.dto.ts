import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MODEL_PROVIDER_KINDS, type ModelProviderKind, type ModelProviderView } from '@openbot/openbot';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';

export class CreateModelProviderRequest {
  @ApiProperty({
    example: 'local',
    minLength: 1,
    maxLength: 100,
    description: 'Unique in the organization; models are named `<provider name>/<model id>`, so no `/`',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @Matches(/\S/, { message: 'name must not be blank' })
  @Matches(/^[^/]*$/, { message: 'name must not contain "/"' })
  name!: string;

  @ApiProperty({
    enum: MODEL_PROVIDER_KINDS,
    description: '`anthropic` is accepted and stored, but no adapter calls it yet',
  })
  @IsIn(MODEL_PROVIDER_KINDS, { message: `kind must be one of ${MODEL_PROVIDER_KINDS.join(', ')}` })
  kind!: ModelProviderKind;

  @ApiProperty({
    example: 'http://127.0.0.1:9999/v1',
    maxLength: 2000,
    description: 'http or https; refused when it resolves to a loopback, private, link-local or metadata address the egress allow list does not name',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(2000)
  baseUrl!: string;

  @ApiPropertyOptional({ maxLength: 8192, description: 'Stored sealed; never returned' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(8192)
  apiKey?: string;
}

export class ModelProviderBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: MODEL_PROVIDER_KINDS })
  kind!: ModelProviderKind;

  @ApiProperty()
  baseUrl!: string;
}

export class ModelProviderPage {
  @ApiProperty({ type: [ModelProviderBody] })
  data!: ModelProviderBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** Lists every field explicitly, so a new column (the sealed key's record) never leaks by default. */
export function toModelProviderBody(provider: ModelProviderView): ModelProviderBody {
  return {
    id: provider.id,
    name: provider.name,
    kind: provider.kind,
    baseUrl: provider.baseUrl,
  };
}
