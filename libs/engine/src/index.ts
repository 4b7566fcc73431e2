/*
 * The engine's authoring entry (`@openbot/engine`): what a feature imports to define workflows and
 * talk to the engine. Definitions, codecs, the phase and end contexts, the `Engine` handle and its
 * transaction handle, the shapes of commands, views and events, the reads and maintenance
 * statements over the engine's tables. The node's machinery (EngineNode, Runner, the prepared
 * client, the group writer, the queue, the pool helpers, the engine's entities) is the node entry,
 * `@openbot/engine/node`, which only the platform imports (a dependency rule enforces it).
 */
export * from './base/json';
export * from './authoring/workflow';
export * from './authoring/phase-services';
export * from './authoring/define-workflow';
export * as codec from './authoring/codec';
export { InvalidStoredJson, type Codec, type Decoded } from './authoring/codec';
export * from './authoring/engine-api';
export * from './authoring/engine-handle';
export type { EngineInTransaction } from './authoring/engine-in-transaction';
export type { ScheduleSpec, ScheduleView } from './authoring/schedule-spec';
export type { MissedRuns } from './base/schedule-times';
export { inputHash } from './authoring/command-key';
export type { Transaction } from './base/tx';
export * from './base/ports';
export * from './base/fault-points';
export * from './base/clock';
export { backoffMs, type BackoffSteps } from './base/backoff';
export * from './base/metrics';
export * from './base/tracing';
export { GateClosed, sleep } from './base/run-scope';
export * from './logs/call-log';
export * from './logs/event-log';
export * from './logs/execution-reads';
export { deltasPrunedAt, pruneEndedBatch, type PruneBatch, type PruneKind, type RetentionDays } from './logs/retention';
export { ENGINE_SEALED_COLUMNS, type SealedColumn } from './logs/reseal';
export { IdentityInvalid } from './run/identity-guard';
