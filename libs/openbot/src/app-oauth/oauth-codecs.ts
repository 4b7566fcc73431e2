import type { Codec, Json } from '@openbot/engine';
import type { AuthorizationServerInfo, DiscoveredAuthorization } from '@openbot/protocol';

/** Plain JSON of a value made of JSON values only (strings, numbers, booleans, arrays, objects). */
export function jsonOf(value: object): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What discovery found, as saved state: checked on the fields the flows read. */
export const discoveredCodec: Codec<DiscoveredAuthorization> = {
  encode: (value) => jsonOf(value),
  decode: (json, path) => {
    const at = path ?? 'discovered';
    if (!isObject(json) || typeof json.resource !== 'string' || !(json.scope === null || typeof json.scope === 'string') || !isObject(json.metadata)) throw new Error(`${at} is not saved discovery`);
    const metadata = json.metadata;
    if (typeof metadata.issuer !== 'string' || typeof metadata.authorization_endpoint !== 'string' || typeof metadata.token_endpoint !== 'string') throw new Error(`${at}.metadata is not authorization-server metadata`);
    return { resource: json.resource, scope: json.scope, metadata: metadata as unknown as AuthorizationServerInfo };
  },
};
