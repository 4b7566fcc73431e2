import type { MigrationInterface } from 'typeorm';
import { Baseline1764500000000 } from './1764500000000-baseline';
import { Engine1764600000000 } from './1764600000000-engine';
import { ExecutionsFillfactor1764700000000 } from './1764700000000-executions-fillfactor';
import { ErrorRecordsExecution1764800000000 } from './1764800000000-error-records-execution';
import { ModelProviders1764900000000 } from './1764900000000-model-providers';
import { Bots1765000000000 } from './1765000000000-bots';
import { Chats1765100000000 } from './1765100000000-chats';
import { Turns1765200000000 } from './1765200000000-turns';
import { UsageHolds1765300000000 } from './1765300000000-usage-holds';
import { TurnHookWrites1765400000000 } from './1765400000000-turn-hook-writes';
import { Access1765500000000 } from './1765500000000-access';
import { Sso1765600000000 } from './1765600000000-sso';
import { ExecutionIdentity1765700000000 } from './1765700000000-execution-identity';
import { RequestLimits1766000000000 } from './1766000000000-request-limits';
import { AwaitsAndPause1766200000000 } from './1766200000000-awaits-and-pause';
import { SchedulesAndCallKinds1766300000000 } from './1766300000000-schedules-and-call-kinds';
import { Billing1766400000000 } from './1766400000000-billing';
import { ApprovalsAndTasks1766500000000 } from './1766500000000-approvals-and-tasks';
import { LeasedOwnerIndex1766600000000 } from './1766600000000-leased-owner-index';
import { EventSequenceCounters1766650000000 } from './1766650000000-event-sequence-counters';
import { UnsettledExecutionsIndex1766660000000 } from './1766660000000-unsettled-executions-index';
import { RemindersAndNotices1766700000000 } from './1766700000000-reminders-and-notices';
import { Files1766800000000 } from './1766800000000-files';
import { Vaults1766900000000 } from './1766900000000-vaults';
import { BotMemory1767000000000 } from './1767000000000-bot-memory';
import { AppsAndConnections1767100000000 } from './1767100000000-apps-and-connections';
import { MessageFiles1767300000000 } from './1767300000000-message-files';
import { AppViews1767400000000 } from './1767400000000-app-views';
import { AppOAuth1767500000000 } from './1767500000000-app-oauth';
import { AppProofsAndIndex1767550000000 } from './1767550000000-app-proofs-and-index';
import { AppDeveloperTests1767560000000 } from './1767560000000-app-developer-tests';
import { Retention1767600000000 } from './1767600000000-retention';
import { AppOAuthMetadataDocuments1767710000000 } from './1767710000000-app-oauth-metadata-documents';
import { DeveloperTestGrants1767720000000 } from './1767720000000-developer-test-grants';
import { AppOAuthBoundSignIns1767800000000 } from './1767800000000-app-oauth-bound-sign-ins';
import { PriceSetBy1767840000000 } from './1767840000000-price-set-by';
import { ApprovalApprovers1767860000000 } from './1767860000000-approval-approvers';
import { OrganizationLimits1767870000000 } from './1767870000000-organization-limits';
import { ErrorRecordDetail1767890000000 } from './1767890000000-error-record-detail';
import { TurnEnds1767900000000 } from './1767900000000-turn-ends';
import { AppProofFailureReason1767910000000 } from './1767910000000-app-proof-failure-reason';
import { ScopeCloseErrors1767930000000 } from './1767930000000-scope-close-errors';

/** Every migration in order. The baseline never changes (MIG-01); later changes are new files. */
export const MIGRATIONS: ReadonlyArray<new () => MigrationInterface> = [
  Baseline1764500000000,
  Engine1764600000000,
  ExecutionsFillfactor1764700000000,
  ErrorRecordsExecution1764800000000,
  ModelProviders1764900000000,
  Bots1765000000000,
  Chats1765100000000,
  Turns1765200000000,
  UsageHolds1765300000000,
  TurnHookWrites1765400000000,
  Access1765500000000,
  Sso1765600000000,
  ExecutionIdentity1765700000000,
  RequestLimits1766000000000,
  AwaitsAndPause1766200000000,
  SchedulesAndCallKinds1766300000000,
  Billing1766400000000,
  ApprovalsAndTasks1766500000000,
  LeasedOwnerIndex1766600000000,
  EventSequenceCounters1766650000000,
  UnsettledExecutionsIndex1766660000000,
  RemindersAndNotices1766700000000,
  Files1766800000000,
  Vaults1766900000000,
  BotMemory1767000000000,
  AppsAndConnections1767100000000,
  MessageFiles1767300000000,
  AppViews1767400000000,
  AppOAuth1767500000000,
  AppProofsAndIndex1767550000000,
  AppDeveloperTests1767560000000,
  Retention1767600000000,
  AppOAuthMetadataDocuments1767710000000,
  DeveloperTestGrants1767720000000,
  AppOAuthBoundSignIns1767800000000,
  PriceSetBy1767840000000,
  ApprovalApprovers1767860000000,
  OrganizationLimits1767870000000,
  ErrorRecordDetail1767890000000,
  TurnEnds1767900000000,
  AppProofFailureReason1767910000000,
  ScopeCloseErrors1767930000000,
];
