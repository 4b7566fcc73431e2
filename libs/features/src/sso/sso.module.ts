import { Module } from '@nestjs/common';
import { AuthenticateSessionHandler } from './commands/authenticate-session.command';
import { BeginSsoLoginHandler } from './commands/begin-sso-login.command';
import { CompleteSsoLoginHandler } from './commands/complete-sso-login.command';
import { ConfigureSsoHandler } from './commands/configure-sso.command';
import { DeleteSsoHandler } from './commands/delete-sso.command';
import { SignOutHandler } from './commands/sign-out.command';
import { GetSessionHandler } from './queries/get-session.query';
import { GetSsoConfigurationHandler } from './queries/get-sso-configuration.query';
import { RelyingParties } from './relying-party';

/**
 * Enterprise single sign-on (OpenID Connect) and browser sessions (FW-09: its own business
 * module; it shares members, roles and the audit log with organizations and access, and its
 * sessions give the same MemberCaller API keys give, IDN-09).
 */
@Module({
  providers: [
    RelyingParties,
    ConfigureSsoHandler,
    DeleteSsoHandler,
    GetSsoConfigurationHandler,
    BeginSsoLoginHandler,
    CompleteSsoLoginHandler,
    AuthenticateSessionHandler,
    GetSessionHandler,
    SignOutHandler,
  ],
})
export class SsoModule {}
