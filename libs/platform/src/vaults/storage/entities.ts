import { VaultItemEntity } from './vault-item.entity';
import { VaultUserEntity } from './vault-user.entity';
import { VaultEntity } from './vault.entity';

export const VAULT_ENTITIES = [VaultEntity, VaultUserEntity, VaultItemEntity] as const;
