import { Module } from '@nestjs/common';
import { BlockedAddresses } from './blocked-addresses';
import { CountFailedAuthenticationHandler } from './commands/count-failed-authentication.command';
import { CountSsoLoginHandler } from './commands/count-sso-login.command';
import { NodeStreams, OpenEventStreamHandler } from './commands/open-event-stream.command';
import { GetOrganizationLimitsHandler } from './queries/get-organization-limits.query';
import { RateLimitWindows } from './rate-limit-windows';
import { StreamSlotReleases } from './stream-slot-releases';

/**
 * Caps on long-lived and public work (docs/decisions/017): open event streams per node and per
 * credential, SSO logins and failed authentications per client address; and what one
 * organization may hold or run at once (docs/decisions/076), read at `GET /v1/limits`.
 */
@Module({
  providers: [
    RateLimitWindows,
    BlockedAddresses,
    NodeStreams,
    StreamSlotReleases,
    CountFailedAuthenticationHandler,
    CountSsoLoginHandler,
    OpenEventStreamHandler,
    GetOrganizationLimitsHandler,
  ],
})
export class LimitsModule {}
