import { Body, Controller, Delete, Get, HttpCode, Inject, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { ConfigureSso, DeleteSso, GetSession, GetSsoConfiguration } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ConfigureSsoRequest, SessionBody, SsoConfigurationBody, toSessionBody, toSsoConfigurationBody } from './sso.dto';

/**
 * The organization's single sign-on configuration (needs `sso.manage`: owners and admins; setting
 * it also `members.manage` and the rights of its default role) and the
 * calling browser session. API keys and the `openbot_session` cookie reach these routes alike (IDN-09).
 */
@ApiTags('sso')
@ApiBearerAuth()
@Access('member')
@Controller('v1/sso')
export class SsoController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Put()
  @Requires('sso.manage')
  @ApiOperation({
    summary: 'Configure OpenID Connect sign-in for the organization (creates or replaces it); the client secret is stored sealed and never returned',
    description:
      'The issuer must pass the egress policy (400 on `issuer`); its endpoints are discovered at each login. ' +
      'Register `redirectUri` at the provider. Every change raises `revision`. ' +
      '`defaultRole` goes to everyone the provider signs in for the first time, so setting it is a role grant: besides `sso.manage`, ' +
      'the credential needs `members.manage` and every permission of that role (a key narrowed by scopes included), else 403 naming what it lacks. ' +
      'A new default role is audited as `sso.default-role-changed` (`from`, `to`).',
  })
  @ApiOkResponse({ type: SsoConfigurationBody })
  @ApiErrors(400, 401, 403)
  async configure(@CurrentMember() caller: MemberCaller, @Body() body: ConfigureSsoRequest): Promise<SsoConfigurationBody> {
    const view = await this.commands.execute(
      new ConfigureSso(caller, body.issuer.trim(), body.clientId.trim(), body.clientSecret, body.allowedDomains.map((d) => d.trim()), body.defaultRole),
    );
    return toSsoConfigurationBody(view);
  }

  @Get()
  @Requires('sso.manage')
  @ApiOperation({ summary: 'Read the organization’s single sign-on configuration (404 SsoNotConfigured when off)' })
  @ApiOkResponse({ type: SsoConfigurationBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller): Promise<SsoConfigurationBody> {
    return toSsoConfigurationBody(await this.queries.execute(new GetSsoConfiguration(caller)));
  }

  @Delete()
  @HttpCode(204)
  @Requires('sso.manage')
  @ApiOperation({
    summary: 'Turn single sign-on off: the configuration and its sealed secret are deleted; signed-in sessions run until they end',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller): Promise<void> {
    await this.commands.execute(new DeleteSso(caller));
  }

  @Get('session')
  @Requires('organization.read')
  @ApiOperation({
    summary: 'The calling browser session, with its CSRF token',
    description: 'Needs the session cookie (404 SessionNotFound for an API key). Send `csrfToken` as `x-csrf-token` on every unsafe request made with the cookie.',
  })
  @ApiOkResponse({ type: SessionBody })
  @ApiErrors(401, 403, 404)
  async session(@CurrentMember() caller: MemberCaller): Promise<SessionBody> {
    return toSessionBody(await this.queries.execute(new GetSession(caller)));
  }
}
