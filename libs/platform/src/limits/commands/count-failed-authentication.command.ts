import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { RateLimited } from '@openbot/domain';
import { keyIdOf } from '../../identity/api-key-secret';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { BlockedAddresses } from '../blocked-addresses';
import { clientKeyOf } from '../client-address';
import { RateLimitWindows } from '../rate-limit-windows';

/**
 * Counts one failed authentication across nodes (docs/decisions/017, 073), twice: per client
 * address and, when the bearer secret names an API key, per key ID (the public part of the
 * secret). Each is limited to `OPENBOT_AUTH_FAILURE_LIMIT` per window; a failure past either
 * limit is refused with 429 RateLimited itself. A valid credential never comes here, so neither an
 * address nor a key ID over its limit ever refuses a valid credential (decision 073).
 */
export class CountFailedAuthentication extends Command<void> {
  constructor(
    readonly clientAddress: string | undefined,
    /** The bearer secret that failed, or null (a session cookie, no credential). */
    readonly bearerSecret: string | null,
  ) {
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

  async execute({ clientAddress, bearerSecret }: CountFailedAuthentication): Promise<void> {
    const keyId = bearerSecret === null ? null : keyIdOf(bearerSecret);
    const overKey = keyId === null ? 0 : await this.count(`auth-failure-key:${keyId}`, keyBlock(keyId));
    const address = clientKeyOf(clientAddress);
    // An address this node already knows is over the limit is not written again: its window holds.
    const known = this.blocked.remainingSeconds(addressBlock(address));
    const overAddress = known > 0 ? known : await this.count(`auth-failure:${address}`, addressBlock(address));
    if (overKey > 0) throw keyLocked(overKey);
    if (overAddress > 0) throw tooManyFailures(overAddress);
  }

  /** Counts one hit; answers the seconds to refuse for when past the limit, else 0. */
  private async count(bucket: string, blockKey: string): Promise<number> {
    const { hits, retryAfterSeconds } = await this.windows.hit(bucket);
    const limit = this.config.limits.authFailuresPerWindow;
    if (hits >= limit) this.blocked.block(blockKey, retryAfterSeconds);
    return hits > limit ? retryAfterSeconds : 0;
  }
}

/** The in-memory block entry of a client address key (clientKeyOf). */
export function addressBlock(addressKey: string): string {
  return `address:${addressKey}`;
}

/** The in-memory block entry of an API key ID. */
export function keyBlock(keyId: string): string {
  return `key:${keyId}`;
}

export function tooManyFailures(retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds, 'Too many failed authentications from this address; retry after the Retry-After seconds.');
}

export function keyLocked(retryAfterSeconds: number): RateLimited {
  return new RateLimited(retryAfterSeconds, 'Too many failed authentications with this API key ID; the key is refused until the Retry-After seconds have passed.');
}
