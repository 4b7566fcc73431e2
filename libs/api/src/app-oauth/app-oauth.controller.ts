import { Body, Controller, Get, Header, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { AuthorizeConnection, CompleteAuthorization, GetClientMetadataDocument } from '@openbot/openbot';
import type { FastifyReply } from 'fastify';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { AuthorizationOutcomeBody, AuthorizationUrlBody, AuthorizeConnectionRequest, ClientMetadataDocumentBody } from './app-oauth.dto';

@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1/connections')
export class ConnectionAuthorizationController {
  constructor(@Inject(CommandBus) private readonly commands: CommandBus) {}

  @Post(':id/authorize')
  @Requires('apps.write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start OAuth authorization of a connection: answers the URL to open in a browser',
    description:
      'Sign-in preparation runs as an execution through the call log: the server’s 401 challenge, its protected-resource metadata (RFC 9728), ' +
      'the authorization server’s metadata with its issuer checked (RFC 8414); a server without PKCE S256 is refused (409 AppAuthorizationRefused). ' +
      'The OAuth client is the issuer’s pre-registered one, else a Client ID Metadata Document (when the server advertises `client_id_metadata_document_supported` and the public URL is https), ' +
      'else one registered dynamically (RFC 7591); OpenBot makes one of the last two once per issuer. ' +
      'An organization connection needs apps.manage; a member connection gets its member’s own grant. 503 when the authorization server cannot be reached.',
  })
  @ApiOkResponse({ type: AuthorizationUrlBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async authorize(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: AuthorizeConnectionRequest): Promise<AuthorizationUrlBody> {
    return this.commands.execute(new AuthorizeConnection(caller, id, body.returnTo ?? null));
  }
}

/**
 * The authorization server's side of App OAuth, public (neither the browser nor the server
 * carries a credential): the redirect back, whose state is the proof, valid once, for its own
 * registration only; and the Client ID Metadata Document of a registration made that way.
 */
@ApiTags('apps')
@Access('public')
@Controller('v1/oauth')
export class OAuthCallbackController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get(':registrationId/client-metadata.json')
  @Header('cache-control', 'public, max-age=3600')
  @ApiOperation({
    summary: 'The Client ID Metadata Document of a registration (its URL is the OAuth client_id)',
    description:
      'Fetched by the authorization server of a registration made by Client ID Metadata Document (the MCP authorization spec’s CIMD): ' +
      '`client_id` is this URL, the one redirect URI is the registration’s callback, a public client (`token_endpoint_auth_method` `none`, PKCE S256). ' +
      'It never changes for the registration’s lifetime. Any other registration is 404.',
  })
  @ApiParam({ name: 'registrationId', format: 'uuid' })
  @ApiOkResponse({ type: ClientMetadataDocumentBody })
  @ApiErrors(404)
  async clientMetadata(@Param('registrationId') registrationId: string): Promise<ClientMetadataDocumentBody> {
    const document = await this.queries.execute(new GetClientMetadataDocument(registrationId));
    return { ...document, redirect_uris: [...document.redirect_uris], grant_types: [...document.grant_types], response_types: [...document.response_types] };
  }

  @Get(':registrationId/callback')
  @ApiOperation({
    summary: 'The authorization server’s redirect back after a connection’s authorization (one callback per issuer and OAuth client)',
    description:
      'A state issued for another registration is refused (400) before its code is sent anywhere: the mix-up defence. ' +
      'A used or expired state is 400; an `iss` that is not the registration’s issuer, or a missing one when the server advertises it (RFC 9207), is 401. ' +
      'The code exchange runs as an execution; the answer shows the connection `ready`, or not, with the reason. ' +
      'With a `returnTo` on the authorization, it is a 303 there with `connectionId` and `state` added.',
  })
  @ApiParam({ name: 'registrationId', format: 'uuid' })
  @ApiQuery({ name: 'code', required: false })
  @ApiQuery({ name: 'state', required: true })
  @ApiQuery({ name: 'iss', required: false, description: 'The issuer of the authorization response (RFC 9207)' })
  @ApiQuery({ name: 'error', required: false, description: 'Sent by the authorization server instead of `code` when it did not authorize' })
  @ApiOkResponse({ type: AuthorizationOutcomeBody })
  @ApiResponse({ status: 303, description: 'To `returnTo`, with `connectionId` and `state` in its query' })
  @ApiErrors(400, 401, 404)
  async callback(
    @Param('registrationId') registrationId: string,
    @Query('code') code: unknown,
    @Query('state') state: unknown,
    @Query('iss') iss: unknown,
    @Query('error') error: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    const done = await this.commands.execute(
      new CompleteAuthorization(registrationId, {
        code: text(code),
        state: text(state),
        // Present means checked, even empty; a repeated `iss` becomes JSON text, which never equals an issuer.
        iss: iss === undefined ? null : typeof iss === 'string' ? iss : JSON.stringify(iss),
        error: text(error),
      }),
    );
    const body: AuthorizationOutcomeBody = { connectionId: done.connectionId, developerTestId: done.developerTestId, state: done.state, reason: done.reason, executionId: done.executionId };
    if (done.returnTo !== null) {
      const target = new URL(done.returnTo, 'http://openbot.invalid');
      if (done.connectionId !== null) target.searchParams.set('connectionId', done.connectionId);
      if (done.developerTestId !== null) target.searchParams.set('developerTestId', done.developerTestId);
      target.searchParams.set('state', done.state);
      await reply.header('cache-control', 'no-store').redirect(`${target.pathname}${target.search}`, 303);
      return;
    }
    await reply.header('cache-control', 'no-store').status(200).send(body);
  }
}
