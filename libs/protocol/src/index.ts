/**
 * libs/protocol: MCP client connections (both eras), Server Card parsing and validation, App
 * discovery and the declaration codec. It imports only libs/domain and works on its own.
 */
export * from './http/capped-fetch';
export * from './connection';
export * from './declaration';
export * from './failures';
export * from './oauth';
export * from './server-card';
export * from './stdio';
export * from './tool-names';
