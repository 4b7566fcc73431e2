import { Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiHeader, ApiNoContentResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Unauthenticated } from '@openbot/domain';
import { AuthenticateSession, BeginSsoLogin, CompleteSsoLogin, SignOut, SsoCallbackMoved } from '@openbot/features';
import { RUNTIME_CONFIG, type RuntimeConfig } from '@openbot/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Access } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { SESSION_COOKIE } from '../auth/bearer.guard';
import { clearLoginCookie, clearSessionCookie, LOGIN_COOKIE, setLoginCookie, setSessionCookie } from './session-cookies';
import { LimitSsoLogins } from './sso-login-limit.guard';

const REDIRECT_HEADERS = {
  Location: { description: 'Where the browser goes next', schema: { type: 'string' } },
  'Set-Cookie': { description: 'HttpOnly, SameSite=Lax; Secure unless the server’s public URL is plain http on loopback', schema: { type: 'string' } },
} as const;

/**
 * The browser side of single sign-on: signing in (public: the browser has no credential yet) and
 * signing out (the session cookie itself is the credential; no permission is needed to end one's
 * own session). Failures answer in the API's declared error shapes like every other route (ERR-02).
 */
@ApiTags('sso')
@Access('public')
@Controller('v1/sso')
export class SsoLoginController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  @Get(':organizationId/login')
  @LimitSsoLogins()
  @ApiOperation({
    summary: 'Start signing in with the organization’s identity provider',
    description:
      'Redirects (302) to the provider’s authorization endpoint: authorization code flow, scope `openid email profile`, ' +
      'state, nonce, and PKCE S256 when the provider lists it. The login is valid for 10 minutes, once, in this browser only.',
  })
  @ApiParam({ name: 'organizationId', format: 'uuid' })
  @ApiQuery({
    name: 'returnTo',
    required: false,
    description: 'A path of this server (one leading `/`) to return to after sign-in; anything else returns to /v1/me',
  })
  @ApiResponse({ status: 302, description: 'To the identity provider; sets the short-lived login cookie', headers: REDIRECT_HEADERS })
  @ApiErrors(404)
  async login(@Param('organizationId') organizationId: string, @Query('returnTo') returnTo: unknown, @Res() reply: FastifyReply): Promise<void> {
    const begun = await this.commands.execute(new BeginSsoLogin(organizationId, typeof returnTo === 'string' ? returnTo : null));
    setLoginCookie(reply, begun.browserBinding, begun.callbackPath, begun.lifetimeSeconds, this.config.cookieSecure);
    await reply.header('cache-control', 'no-store').redirect(begun.location, 302);
  }

  @Get(':organizationId/callback')
  @ApiOperation({
    summary: 'The identity provider’s redirect back after sign-in (register `<public URL>/v1/sso/{organizationId}/callback`, the `redirectUri` of `GET /v1/sso`)',
    description:
      'Each organization has its own callback: a state begun for another organization is refused (400) before its code is sent anywhere, ' +
      'and so is an `iss` that is not the organization’s issuer, or a missing one when the provider advertises it (RFC 9207; 401). ' +
      'Exchanges the code, verifies the ID token (signature against the provider’s keys, issuer, audience, expiry, nonce), ' +
      'requires a verified email of an allowed domain, finds or creates the member (just-in-time), and opens an 8-hour session. ' +
      'A used, expired or foreign state is 400; a token that does not verify is 401; an email that may not sign in is 403, and so is ' +
      'a callback opened in another browser than the one that started the login (that login stays usable by its own browser).',
  })
  @ApiParam({ name: 'organizationId', format: 'uuid' })
  @ApiQuery({ name: 'code', required: false })
  @ApiQuery({ name: 'state', required: true })
  @ApiQuery({ name: 'iss', required: false, description: 'The issuer of the authorization response (RFC 9207); must be the organization’s issuer when sent' })
  @ApiQuery({ name: 'error', required: false, description: 'Sent by the provider instead of `code` when it did not sign the user in' })
  @ApiResponse({ status: 302, description: 'To `returnTo`; sets the `openbot_session` cookie', headers: REDIRECT_HEADERS })
  @ApiErrors(400, 401, 403, 404)
  async callback(
    @Param('organizationId') organizationId: string,
    @Query('code') code: unknown,
    @Query('state') state: unknown,
    @Query('iss') iss: unknown,
    @Query('error') error: unknown,
    @Query('error_description') errorDescription: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    const binding = request.cookies[LOGIN_COOKIE];
    const done = await this.commands.execute(
      new CompleteSsoLogin(
        organizationId,
        {
          code: text(code),
          state: text(state),
          error: text(error),
          errorDescription: text(errorDescription),
          // Present means checked, even empty; a repeated `iss` (an array) becomes JSON text, which never equals an http(s) issuer.
          iss: iss === undefined ? null : typeof iss === 'string' ? iss : JSON.stringify(iss),
        },
        binding === undefined || binding === '' ? null : binding,
      ),
    );
    // The login is used up now. A refused callback leaves the cookie: its login may still belong to this browser, and it expires on its own.
    clearLoginCookie(reply, done.callbackPath, this.config.cookieSecure);
    setSessionCookie(reply, done.sessionToken, done.expiresAt, this.config.cookieSecure);
    await reply.header('cache-control', 'no-store').redirect(done.returnTo, 302);
  }

  @Get('callback')
  @ApiOperation({
    summary: 'Retired: the shared callback of earlier versions answers 404 SsoCallbackMoved',
    description:
      'Every organization now has its own callback, `/v1/sso/{organizationId}/callback` (the `redirectUri` of `GET /v1/sso`): ' +
      'a shared one let one organization’s identity provider relay another organization’s authorization code to itself. ' +
      'Register the new URI at the provider.',
    deprecated: true,
  })
  @ApiErrors(404)
  retiredCallback(): never {
    throw new SsoCallbackMoved();
  }

  @Post('logout')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Sign the calling browser session out: it is revoked at once, on every node, and its cookie cleared',
    description: 'Needs the `openbot_session` cookie and its CSRF token (`GET /v1/sso/session`) as `x-csrf-token`. API keys are revoked, not signed out.',
  })
  @ApiHeader({ name: 'x-csrf-token', required: true, description: 'The session’s CSRF token' })
  @ApiNoContentResponse({ description: 'Signed out; the cookie is cleared' })
  @ApiErrors(401, 403)
  async logout(
    @Req() request: FastifyRequest,
    @Headers('x-csrf-token') csrfToken: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const token = request.cookies[SESSION_COOKIE];
    if (token === undefined || token === '') throw new Unauthenticated('Signing out needs the session cookie.');
    // The same authentication (and CSRF check) every cookie request gets from the guard (IDN-09).
    const caller = await this.commands.execute(new AuthenticateSession(token, true, typeof csrfToken === 'string' ? csrfToken : null));
    await this.commands.execute(new SignOut(caller));
    clearSessionCookie(reply, this.config.cookieSecure);
  }
}
