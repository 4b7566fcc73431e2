import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { RateLimited } from '@openbot/domain';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { clientKeyOf } from '../client-address';
import { RateLimitWindows } from '../rate-limit-windows';

/**
 * Counts one start of an SSO login from a client address, across nodes, and refuses it with
 * 429 RateLimited past `OPENBOT_SSO_LOGIN_LIMIT` per window (docs/decisions/017): the public
 * login route costs a provider discovery and a stored login each time.
 */
export class CountSsoLogin extends Command<void> {
  constructor(readonly clientAddress: string | undefined) {
    super();
  }
}

@CommandHandler(CountSsoLogin)
export class CountSsoLoginHandler implements ICommandHandler<CountSsoLogin> {
  constructor(
    @Inject(RateLimitWindows) private readonly windows: RateLimitWindows,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ clientAddress }: CountSsoLogin): Promise<void> {
    const { hits, retryAfterSeconds } = await this.windows.hit(`sso-login:${clientKeyOf(clientAddress)}`);
    if (hits > this.config.limits.ssoLoginsPerWindow) {
      throw new RateLimited(retryAfterSeconds, 'Too many sign-ins started from this address; retry after the Retry-After seconds.');
    }
  }
}
