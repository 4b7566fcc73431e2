import type { Codec, Json } from '@openbot/engine';
import type { AuthorizationServerInfo, DiscoveredAuthorization } from '@openbot/protocol';

/** Plain JSON of a value made of JSON values only (strings, numbers, booleans, arrays, objects). */
export function jsonOf(value: object): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const strings = (value: unknown): value is readonly string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Saved authorization-server metadata, each field OpenBot keeps checked for its type. */
function serverInfo(m: Record<string, unknown>, at: string): AuthorizationServerInfo {
  const { issuer, authorization_endpoint, token_endpoint, registration_endpoint, revocation_endpoint, scopes_supported, response_types_supported } = m;
  const { code_challenge_methods_supported, token_endpoint_auth_methods_supported, authorization_response_iss_parameter_supported, client_id_metadata_document_supported } = m;
  if (typeof issuer !== 'string' || typeof authorization_endpoint !== 'string' || typeof token_endpoint !== 'string') throw new Error(`${at} is not authorization-server metadata`);
  const optional = <T>(value: unknown, fits: (v: unknown) => v is T): T | undefined => {
    if (value === undefined || fits(value)) return value;
    throw new Error(`${at} is not authorization-server metadata`);
  };
  const text = (v: unknown): v is string => typeof v === 'string';
  const flag = (v: unknown): v is boolean => typeof v === 'boolean';
  const registration = optional(registration_endpoint, text);
  const revocation = optional(revocation_endpoint, text);
  const scopes = optional(scopes_supported, strings);
  const challenges = optional(code_challenge_methods_supported, strings);
  const authMethods = optional(token_endpoint_auth_methods_supported, strings);
  const issParameter = optional(authorization_response_iss_parameter_supported, flag);
  const metadataDocument = optional(client_id_metadata_document_supported, flag);
  // Absent fields stay absent, as they were saved.
  return {
    issuer,
    authorization_endpoint,
    token_endpoint,
    ...(registration === undefined ? {} : { registration_endpoint: registration }),
    ...(revocation === undefined ? {} : { revocation_endpoint: revocation }),
    ...(scopes === undefined ? {} : { scopes_supported: scopes }),
    // Saved before this field was kept: none listed.
    response_types_supported: optional(response_types_supported, strings) ?? [],
    ...(challenges === undefined ? {} : { code_challenge_methods_supported: challenges }),
    ...(authMethods === undefined ? {} : { token_endpoint_auth_methods_supported: authMethods }),
    ...(issParameter === undefined ? {} : { authorization_response_iss_parameter_supported: issParameter }),
    ...(metadataDocument === undefined ? {} : { client_id_metadata_document_supported: metadataDocument }),
  };
}

/** What discovery found, as saved state: checked on the fields the flows read. */
export const discoveredCodec: Codec<DiscoveredAuthorization> = {
  encode: (value) => jsonOf(value),
  decode: (json, path) => {
    const at = path ?? 'discovered';
    if (!isObject(json) || typeof json.resource !== 'string' || !(json.scope === null || typeof json.scope === 'string') || !isObject(json.metadata)) throw new Error(`${at} is not saved discovery`);
    return { resource: json.resource, scope: json.scope, metadata: serverInfo(json.metadata, `${at}.metadata`) };
  },
};
