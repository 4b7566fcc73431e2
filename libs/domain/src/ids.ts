/** Branded identifiers: a MemberId can never be passed where an OrganizationId is expected. */
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type OrganizationId = Brand<string, 'OrganizationId'>;
export type MemberId = Brand<string, 'MemberId'>;
export type ApiKeyId = Brand<string, 'ApiKeyId'>;
export type ErrorId = Brand<string, 'ErrorId'>;
export type SealedRecordId = Brand<string, 'SealedRecordId'>;
export type ModelProviderId = Brand<string, 'ModelProviderId'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Resource IDs are UUIDs; anything else is treated as an unknown resource by callers
 * (a malformed ID answers exactly like a missing one, docs/http-api.md).
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
export type ExecutionId = Brand<string, 'ExecutionId'>;
export type ServiceId = Brand<string, 'ServiceId'>;
export type BotId = Brand<string, 'BotId'>;
export type ChatId = Brand<string, 'ChatId'>;
