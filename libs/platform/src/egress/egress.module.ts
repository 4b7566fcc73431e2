import { readFileSync } from 'node:fs';
import { Global, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { EgressClient } from './egress-client';
import { EgressPolicy, type HostLookup } from './egress-policy';

/**
 * Replaces the system resolver of the egress policy when a module provides it (tests script DNS
 * answers with it, e.g. a rebinding name); unset in the server, which uses `dns.lookup`.
 */
export const EGRESS_HOST_LOOKUP = Symbol('EgressHostLookup');

/** Closes the egress client's pooled connections when the node stops. */
@Injectable()
class EgressShutdown implements OnApplicationShutdown {
  constructor(@Inject(EgressClient) private readonly client: EgressClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/** The one egress policy, and the one client, every outbound request to an organization-supplied URL passes. */
@Global()
@Module({
  providers: [
    {
      provide: EgressPolicy,
      inject: [RUNTIME_CONFIG, { token: EGRESS_HOST_LOOKUP, optional: true }],
      useFactory: (config: RuntimeConfig, lookup: HostLookup | undefined) => {
        // Why a destination was refused goes to the operator's log only; members and models see one text for all (decision 074).
        const logger = new Logger('Egress');
        return new EgressPolicy(config.egressAllow, lookup, (detail) => logger.warn(`egress refused: ${detail}`));
      },
    },
    {
      provide: EgressClient,
      inject: [EgressPolicy, RUNTIME_CONFIG],
      useFactory: (policy: EgressPolicy, config: RuntimeConfig) =>
        new EgressClient(
          policy,
          { toolAnswerBytes: config.egressToolAnswerLimit, documentBytes: config.egressDocumentLimit },
          config.egressCaFile === null ? undefined : readFileSync(config.egressCaFile, 'utf8'),
        ),
    },
    EgressShutdown,
  ],
  exports: [EgressPolicy, EgressClient],
})
export class EgressModule {}
