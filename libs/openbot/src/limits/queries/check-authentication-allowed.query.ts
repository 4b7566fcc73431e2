import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { BlockedAddresses } from '../blocked-addresses';
import { clientKeyOf } from '../client-address';
import { tooManyFailures } from '../commands/count-failed-authentication.command';

/**
 * Refuses (429 RateLimited) a client address this node knows is over the failed-authentication
 * limit, before its credential is looked at (docs/decisions/017). In memory: no database read.
 */
export class CheckAuthenticationAllowed extends Query<void> {
  constructor(readonly clientAddress: string | undefined) {
    super();
  }
}

@QueryHandler(CheckAuthenticationAllowed)
export class CheckAuthenticationAllowedHandler implements IQueryHandler<CheckAuthenticationAllowed> {
  constructor(@Inject(BlockedAddresses) private readonly blocked: BlockedAddresses) {}

  async execute({ clientAddress }: CheckAuthenticationAllowed): Promise<void> {
    const seconds = this.blocked.remainingSeconds(clientKeyOf(clientAddress));
    if (seconds > 0) throw tooManyFailures(seconds);
  }
}
