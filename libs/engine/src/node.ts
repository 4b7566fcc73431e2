/*
 * The engine's node entry (`@openbot/engine/node`): what builds and runs one node's engine. Only
 * the platform imports it (its engine wiring, database, metrics and rekey); features get the
 * `Engine` handle of the authoring entry (`@openbot/engine`) injected instead.
 */
export { EngineNode } from './node/engine';
export type { EngineOptions } from './node/engine-options';
export { Runner } from './node/runner';
export { PreparedClient } from './base/prepared-client';
export { GroupWriter, type GroupWrite } from './base/group-writer';
export * from './base/queue';
export { withConnection, withTransaction } from './base/tx';
export * from './base/storage-retry';
export * from './base/resource-stack';
export { RunScope, type GateReason } from './base/run-scope';
export { Schedules } from './run/schedules';
export * from './run/event-publisher';
export * from './storage/entities';
export { executionCountsByState, advanceQueueDepth } from './logs/metrics-reads';
export { resealBatch, sealedUnderOtherKeys, type ResealBatch } from './logs/reseal';
