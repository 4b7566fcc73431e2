import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { RateLimited } from '@openbot/domain';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { BlockedAddresses } from '../blocked-addresses';
import { clientKeyOf } from '../client-address';
import { RateLimitWindows } from '../rate-limit-windows';

/**
 * Counts one failed authentication of a client address, across nodes (docs/decisions/017).
 * Once the address reaches `OPENBOT_AUTH_FAILURE_LIMIT` in its window this node refuses it
 * before authenticating; a failure past the limit is refused with 429 RateLimited itself.
 */
export class CountFailedAuthentication extends Command<void> {
  constructor(readonly clientAddress: string | undefined) {
    super();
  }
}

@CommandHandler(CountFailedAuthentication)
export class CountFailedAuthenticationHandler implements ICommandHandler<CountFailedAuthentication> {
  constructor(
    @Inject(RateLimitWindows) private readonly windows: RateLimitWindows,
    @Inject(BlockedAddresses) private readonly blocked: BlockedAddresses,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ clientAddress }: CountFailedAuthentication): Promise<void> {
    const key = clientKeyOf(clientAddress);
    const { hits, retryAfterSeconds } = await this.windows.hit(`auth-failure:${key}`);
    const limit = this.config.limits.authFailuresPerWindow;
    if (hits >= limit) this.blocked.block(key, retryAfterSeconds);
    if (hits > limit) throw tooManyFailures(retryAfterSeconds);
  }
}

export function tooManyFailures(retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds, 'Too many failed authentications from this address; retry after the Retry-After seconds.');
}
