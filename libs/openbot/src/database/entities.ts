import { ENGINE_ENTITIES } from '@openbot/engine';
import { ApiKeyEntity } from '../api-keys/storage/api-key.entity';
import { APP_CATALOG_ENTITIES } from '../app-catalog/storage/entities';
import { APP_OAUTH_ENTITIES } from '../app-oauth/storage/entities';
import { APPS_ENTITIES } from '../apps/storage/entities';
import { ApprovalEntity } from '../approvals/storage/approval.entity';
import { FileEntity } from '../files/storage/file.entity';
import { AuditEventEntity } from '../audit/storage/audit-event.entity';
import { BotEntity } from '../bots/storage/bot.entity';
import { BILLING_ENTITIES } from '../billing/storage/entities';
import { ChatCommandEntity } from '../chats/storage/chat-command.entity';
import { ChatMessageEntity } from '../chats/storage/chat-message.entity';
import { ChatTurnEntity } from '../chats/storage/chat-turn.entity';
import { ChatEntity } from '../chats/storage/chat.entity';
import { ClientToolCallEntity } from '../chats/storage/client-tool-call.entity';
import { TurnHookWriteEntity } from '../chats/storage/turn-hook-write.entity';
import { ExecutionLimitsEntity } from '../executions/storage/execution-limits.entity';
import { ExecutionPlanEntity } from '../executions/storage/execution-plan.entity';
import { ExecutionPauseEntity } from '../executions/storage/execution-pause.entity';
import { ErrorRecordEntity } from '../errors/storage/error-record.entity';
import { LIMITS_ENTITIES } from '../limits/storage/entities';
import { MEMORY_ENTITIES } from '../memory/storage/entities';
import { ModelProviderEntity } from '../model-providers/storage/model-provider.entity';
import { MemberEntity } from '../organizations/storage/member.entity';
import { OrganizationEntity } from '../organizations/storage/organization.entity';
import { UsageHoldEntity } from '../usage/storage/usage-hold.entity';
import { UsageRecordEntity } from '../usage/storage/usage-record.entity';
import { ReminderEntity } from '../reminders/storage/reminder.entity';
import { SealedRecordEntity } from '../sealing/storage/sealed-record.entity';
import { ServiceEntity } from '../services/storage/service.entity';
import { SSO_ENTITIES } from '../sso/storage/entities';
import { VAULT_ENTITIES } from '../vaults/storage/entities';
import { OrganizationRetentionEntity } from '../retention/storage/organization-retention.entity';

/** Every TypeORM entity of the product; the schema-drift test compares them with the migrations. */
export const ENTITIES = [
  SealedRecordEntity,
  ErrorRecordEntity,
  OrganizationEntity,
  MemberEntity,
  ApiKeyEntity,
  ModelProviderEntity,
  BotEntity,
  ChatEntity,
  ChatTurnEntity,
  ChatMessageEntity,
  ChatCommandEntity,
  ClientToolCallEntity,
  TurnHookWriteEntity,
  ApprovalEntity,
  FileEntity,
  ExecutionPauseEntity,
  ExecutionLimitsEntity,
  ExecutionPlanEntity,
  ReminderEntity,
  UsageRecordEntity,
  UsageHoldEntity,
  AuditEventEntity,
  ServiceEntity,
  OrganizationRetentionEntity,
  ...SSO_ENTITIES,
  ...BILLING_ENTITIES,
  ...LIMITS_ENTITIES,
  ...VAULT_ENTITIES,
  ...MEMORY_ENTITIES,
  ...APPS_ENTITIES,
  ...APP_OAUTH_ENTITIES,
  ...APP_CATALOG_ENTITIES,
  ...ENGINE_ENTITIES,
] as const;
