import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { VaultItemView, VaultReference, VaultUsersView, VaultView } from '@openbot/platform';
import { ArrayMaxSize, IsArray, IsObject, IsString, IsUUID, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';

const isSent = (_: object, value: unknown): boolean => value !== undefined;

export class CreateVaultRequest {
  @ApiProperty({ example: 'payments', minLength: 1, maxLength: 200, description: 'Unique in the organization' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;
}

export class VaultBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class VaultPage {
  @ApiProperty({ type: [VaultBody] })
  data!: VaultBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export class SetVaultUsersRequest {
  @ApiProperty({ type: [String], format: 'uuid', maxItems: 1000, description: 'The members granted `vaults.use` on this Vault; replaces the whole list' })
  @IsArray()
  @ArrayMaxSize(1000)
  @IsUUID('all', { each: true, message: 'each memberId must be a UUID' })
  memberIds!: string[];
}

export class VaultUsersBody {
  @ApiProperty({ format: 'uuid' })
  vaultId!: string;

  @ApiProperty({ type: [String], format: 'uuid' })
  memberIds!: string[];
}

const FIELDS_DESCRIPTION =
  'Field names (letters, digits, `_`, `-`, `.`, at most 100) and their secret values (strings of 1 to 16,384 characters, at most 50 fields). ' +
  'Stored sealed; no answer ever contains a value.';
const HOSTS_DESCRIPTION =
  'Where the values may be sent: host names or `*.example.com` patterns, each optionally with `:port` (no port: any port). ' +
  'A send to any other host fails with category `forbidden` and sends nothing.';

export class CreateVaultItemRequest {
  @ApiProperty({ example: 'stripe', minLength: 1, maxLength: 200, description: 'Unique in the Vault; references name the item\'s ID, not this name' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { apiKey: 'sk_live_…' }, description: FIELDS_DESCRIPTION })
  @IsObject()
  fields!: Record<string, unknown>;

  @ApiProperty({ type: [String], minItems: 1, maxItems: 50, example: ['api.stripe.com'], description: HOSTS_DESCRIPTION })
  @IsArray()
  allowedHosts!: unknown[];
}

export class ReplaceVaultItemFieldsRequest {
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: `Replaces every field at once. ${FIELDS_DESCRIPTION}` })
  @IsObject()
  fields!: Record<string, unknown>;
}

export class UpdateVaultItemRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'The new name; the ID, and so every reference, stays' })
  @ValidateIf(isSent)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ type: [String], minItems: 1, maxItems: 50, description: `Replaces the allowed hosts. ${HOSTS_DESCRIPTION}` })
  @ValidateIf(isSent)
  @IsArray()
  allowedHosts?: unknown[];
}

export class VaultItemBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  vaultId!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ type: [String], description: 'The names of the sealed fields; never their values' })
  fieldNames!: string[];

  @ApiProperty({ type: [String] })
  allowedHosts!: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class VaultItemPage {
  @ApiProperty({ type: [VaultItemBody] })
  data!: VaultItemBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

/** Every field listed explicitly: a new column never reaches an answer by default. */
export function toVaultBody(vault: VaultView): VaultBody {
  return { id: vault.id, name: vault.name, createdAt: vault.createdAt.toISOString() };
}

export function toVaultItemBody(item: VaultItemView): VaultItemBody {
  return {
    id: item.id,
    vaultId: item.vaultId,
    name: item.name,
    fieldNames: [...item.fieldNames],
    allowedHosts: [...item.allowedHosts],
    createdAt: item.createdAt.toISOString(),
    updatedAt: item.updatedAt.toISOString(),
  };
}

export function toVaultUsersBody(view: VaultUsersView): VaultUsersBody {
  return { vaultId: view.vaultId, memberIds: [...view.memberIds] };
}

/** A reference to one field of one Vault item, as saved and answered (SEC-02: bound to the item's ID). */
export class VaultReferenceBody {
  @ApiProperty({ format: 'uuid', description: 'The item; a new item with the same name is another ID and never takes its place' })
  vaultItemId!: string;

  @ApiProperty({ description: 'One of the item\'s field names' })
  field!: string;

  @ApiPropertyOptional({ maxLength: 100, example: 'Bearer ', description: 'Put before the value when it is sent' })
  prefix?: string;
}

export function toVaultReferenceBody(reference: VaultReference): VaultReferenceBody {
  return { vaultItemId: reference.vaultItemId, field: reference.field, ...(reference.prefix !== undefined ? { prefix: reference.prefix } : {}) };
}
