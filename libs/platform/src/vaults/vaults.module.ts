import { Global, Module } from '@nestjs/common';
import { CreateVaultItemHandler } from './commands/create-vault-item.command';
import { CreateVaultHandler } from './commands/create-vault.command';
import { DeleteVaultItemHandler } from './commands/delete-vault-item.command';
import { DeleteVaultHandler } from './commands/delete-vault.command';
import { ReplaceVaultItemFieldsHandler } from './commands/replace-vault-item-fields.command';
import { SetVaultUsersHandler } from './commands/set-vault-users.command';
import { UpdateVaultItemHandler } from './commands/update-vault-item.command';
import { GetVaultItemHandler } from './queries/get-vault-item.query';
import { GetVaultHandler } from './queries/get-vault.query';
import { ListVaultItemsHandler } from './queries/list-vault-items.query';
import { ListVaultsHandler } from './queries/list-vaults.query';
import { VaultSecrets } from './vault-secrets';

/** Vaults and their items (decision 029); VaultSecrets is how Bots, providers and Apps use references. */
@Global()
@Module({
  providers: [
    CreateVaultHandler,
    DeleteVaultHandler,
    SetVaultUsersHandler,
    CreateVaultItemHandler,
    ReplaceVaultItemFieldsHandler,
    UpdateVaultItemHandler,
    DeleteVaultItemHandler,
    GetVaultHandler,
    ListVaultsHandler,
    GetVaultItemHandler,
    ListVaultItemsHandler,
    VaultSecrets,
  ],
  exports: [VaultSecrets],
})
export class VaultsModule {}
