import { ENGINE_ENTITIES } from '@openbot/engine';
import { ApiKeyEntity } from '../api-keys/storage/api-key.entity';
import { BotEntity } from '../bots/storage/bot.entity';
import { ChatEntity } from '../chats/storage/chat.entity';
import { ErrorRecordEntity } from '../errors/storage/error-record.entity';
import { ModelProviderEntity } from '../model-providers/storage/model-provider.entity';
import { MemberEntity } from '../organizations/storage/member.entity';
import { OrganizationEntity } from '../organizations/storage/organization.entity';
import { SealedRecordEntity } from '../sealing/storage/sealed-record.entity';

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
  ...ENGINE_ENTITIES,
] as const;
