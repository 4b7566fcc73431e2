import { Global, Module } from '@nestjs/common';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Keyring } from './keyring';
import { SealedRecords } from './sealed-records';
import { Sealer } from './sealer';

@Global()
@Module({
  providers: [
    {
      provide: Sealer,
      inject: [RUNTIME_CONFIG],
      useFactory: (config: RuntimeConfig) => new Sealer(new Keyring(config.masterKey, config.oldMasterKeys)),
    },
    SealedRecords,
  ],
  exports: [Sealer, SealedRecords],
})
export class SealingModule {}
