import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { keyIdOf } from '../../api-keys/api-key-secret';
import { BlockedAddresses } from '../blocked-addresses';
import { keyBlock, keyLocked } from '../commands/count-failed-authentication.command';

/**
 * Refuses (429 RateLimited) a bearer secret whose API key ID this node knows is over the
 * failed-authentication limit, before the secret is looked at (docs/decisions/073): guesses at
 * one key stop at the limit however many addresses they come from. In memory: no database read.
 * The client address is deliberately not checked here: an address over its limit still gets in
 * with a valid credential, so clients that share an address (behind a proxy) cannot lock each
 * other out.
 */
export class CheckAuthenticationAllowed extends Query<void> {
  constructor(readonly bearerSecret: string | null) {
    super();
  }
}

@QueryHandler(CheckAuthenticationAllowed)
export class CheckAuthenticationAllowedHandler implements IQueryHandler<CheckAuthenticationAllowed> {
  constructor(@Inject(BlockedAddresses) private readonly blocked: BlockedAddresses) {}

  async execute({ bearerSecret }: CheckAuthenticationAllowed): Promise<void> {
    const keyId = bearerSecret === null ? null : keyIdOf(bearerSecret);
    if (keyId === null) return;
    const seconds = this.blocked.remainingSeconds(keyBlock(keyId));
    if (seconds > 0) throw keyLocked(seconds);
  }
}
