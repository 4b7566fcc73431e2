import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { isVaultReference, MODEL_PROVIDER_KINDS, type ModelProviderKind, type ModelProviderView, type VaultReference } from '@openbot/platform';
import { IsIn, IsString, Matches, MaxLength, MinLength, ValidateBy, ValidateIf } from 'class-validator';
import { toVaultReferenceBody, VaultReferenceBody } from '../vaults/vault.dto';

const MAX_API_KEY = 8192;

/** A literal key (a string of 1 to 8,192 characters) or a Vault reference; the reference's own fields are checked by the use case. */
function IsApiKey(): PropertyDecorator {
  return ValidateBy({
    name: 'isApiKey',
    validator: {
      validate: (value: unknown) => (typeof value === 'string' ? value.length >= 1 && value.length <= MAX_API_KEY : isVaultReference(value)),
      defaultMessage: () => `apiKey must be a string of 1 to ${MAX_API_KEY} characters or a Vault reference { vaultItemId, field }`,
    },
  });
}

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

  @ApiPropertyOptional({
    oneOf: [{ type: 'string', minLength: 1, maxLength: MAX_API_KEY }, { $ref: getSchemaPath(VaultReferenceBody) }],
    description:
      'A literal key, stored sealed and never returned, or a Vault reference `{ vaultItemId, field, prefix? }`, answered as given. ' +
      'A reference needs `vaults.use` on its Vault and the base URL\'s host in the item\'s `allowedHosts`; both are checked again before every model call.',
  })
  @ValidateIf((_: object, value: unknown) => value !== undefined)
  @IsApiKey()
  apiKey?: string | VaultReference;
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

  @ApiPropertyOptional({ type: VaultReferenceBody, description: 'Only when the key is a Vault reference: the reference as given. A literal key is never answered in any form' })
  apiKey?: VaultReferenceBody;
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
    ...(provider.apiKey === null ? {} : { apiKey: toVaultReferenceBody(provider.apiKey) }),
  };
}
