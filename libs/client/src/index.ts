/**
 * The typed OpenBot client: openapi-fetch over the generated `paths` (schema.ts, from the
 * server's OpenAPI document by `npm run generate:client`), typed errors, and a resuming SSE reader.
 * It talks to OpenBot only over HTTP and imports no other library of this repo.
 */
export * from './client';
export * from './errors';
export * from './events';
export { ReplyText, replyText } from './reply-text';
export { SseParser, type SseMessage } from './sse';
export type { components, operations, paths } from './schema';
