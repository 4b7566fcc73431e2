import { Global, Module } from '@nestjs/common';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { EgressPolicy } from './egress-policy';

/** The one egress policy every outbound request to an organization-supplied URL passes. */
@Global()
@Module({
  providers: [{ provide: EgressPolicy, inject: [RUNTIME_CONFIG], useFactory: (config: RuntimeConfig) => new EgressPolicy(config.egressAllow) }],
  exports: [EgressPolicy],
})
export class EgressModule {}
