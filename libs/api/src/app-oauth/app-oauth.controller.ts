import { Body, Controller, Get, Header, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { MemberCaller } from '@openbot/domain';
import { AuthorizeConnection, BindLoopback, CompleteAuthorization, GetClientMetadataDocument, safeReturnTo, StartAuthorization, type CompletedAuthorization } from '@openbot/features';
import { RUNTIME_CONFIG, type RuntimeConfig } from '@openbot/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import {
  AuthorizationOutcomeBody,
  AuthorizationUrlBody,
  AuthorizeConnectionRequest,
  BindLoopbackRequest,
  ClientMetadataDocumentBody,
  CompleteAuthorizationRequest,
  LoopbackAuthorizationBody,
} from './app-oauth.dto';

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
    summary: 'Start OAuth authorization of a connection: answers the URL to open, bound to you',
    description:
      'The browser leg belongs to the member who asks (decision 066): from a signed-in browser session the answer is OpenBot’s start URL, which binds that browser; ' +
      'with a `loopbackRedirect` (required with an API key) it is the authorization server’s URL, whose answer reaches your listener, and you post it to `POST /v1/oauth/authorizations/complete`. ' +
      'A link forwarded to anyone else does nothing. `prompt=consent` is always sent. ' +
      'Sign-in preparation runs as an execution through the call log: the server’s 401 challenge, its protected-resource metadata (RFC 9728), ' +
      'the authorization server’s metadata with its issuer checked (RFC 8414); a server without PKCE S256 is refused (409 AppAuthorizationRefused). ' +
      'The OAuth client is the issuer’s pre-registered one, else a Client ID Metadata Document (when the server advertises `client_id_metadata_document_supported` and the public URL is https), ' +
      'else one registered dynamically (RFC 7591); OpenBot makes one of the last two once per issuer. ' +
      'An organization connection needs apps.manage; a member connection gets its member’s own grant. 503 when the authorization server cannot be reached.',
  })
  @ApiOkResponse({ type: AuthorizationUrlBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async authorize(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: AuthorizeConnectionRequest): Promise<AuthorizationUrlBody> {
    return this.commands.execute(new AuthorizeConnection(caller, id, body.returnTo ?? null, body.loopbackRedirect ?? null));
  }
}

/** The member's side of an App sign-in's browser leg (decision 066): binding it, and completing a loopback one. */
@ApiTags('apps')
@ApiBearerAuth()
@Access('member')
@Controller('v1/oauth/authorizations')
export class AppAuthorizationController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  @Get(':id/start')
  @Requires('apps.write')
  @ApiOperation({
    summary: 'Open an App sign-in in your own signed-in browser: binds this browser, then goes to the authorization server',
    description:
      'Only the browser session of the member who started the authorization opens it: another member is 403, another organization’s authorization 404, an API key 403 (use a loopback listener). ' +
      'Sets an HttpOnly, SameSite=Lax binding cookie whose Path is the registration’s callback; the callback refuses the answer without it (403), so a link forwarded to someone else does nothing.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiResponse({ status: 302, description: 'To the authorization server; sets the binding cookie' })
  @ApiErrors(400, 401, 403, 404)
  async start(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const started = await this.commands.execute(new StartAuthorization(caller, id));
    void reply.setCookie(started.cookie.name, started.cookie.value, { httpOnly: true, sameSite: 'lax', secure: this.config.cookieSecure, path: started.cookie.path, maxAge: started.cookie.maxAgeSeconds });
    await reply.header('cache-control', 'no-store').redirect(started.location, 302);
  }

  @Post(':id/loopback')
  @Requires('apps.write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Bind an App sign-in (a connection’s or a developer test’s) to a listener on your machine; answers the authorization server’s URL',
    description:
      'For a member who works with API keys (RFC 8252 loopback): the callback relays the authorization server’s answer to the listener without using it; post it to `POST /v1/oauth/authorizations/complete`. ' +
      'Only the member who started the authorization binds it: another member is 403, another organization’s authorization 404.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: LoopbackAuthorizationBody })
  @ApiErrors(400, 401, 403, 404)
  async loopback(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: BindLoopbackRequest): Promise<LoopbackAuthorizationBody> {
    return this.commands.execute(new BindLoopback(caller, id, body.redirect));
  }

  @Post('complete')
  @Requires('apps.write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Complete a loopback-bound App sign-in with what your listener received',
    description:
      'Only the member who started it completes it; another organization’s state is 400 like an unknown one. The checks of the callback apply (unused, unexpired state; RFC 9207 `iss`); ' +
      'the code exchange runs as an execution and the answer shows the connection (or developer test) as it left it.',
  })
  @ApiOkResponse({ type: AuthorizationOutcomeBody })
  @ApiErrors(400, 401, 403)
  async complete(@CurrentMember() caller: MemberCaller, @Body() body: CompleteAuthorizationRequest): Promise<AuthorizationOutcomeBody> {
    const done = (await this.commands.execute(
      new CompleteAuthorization({ kind: 'member', caller }, { code: body.code ?? null, state: body.state, iss: body.iss ?? null, error: body.error ?? null }),
    )) as CompletedAuthorization;
    return outcomeOf(done);
  }
}

function outcomeOf(done: CompletedAuthorization): AuthorizationOutcomeBody {
  return { connectionId: done.connectionId, developerTestId: done.developerTestId, state: done.state, reason: done.reason, executionId: done.executionId };
}

/**
 * The validated return path with the outcome added to its query. The path is kept exactly as
 * validated (a URL parser would normalize `/.//evil.example/x` into `//evil.example/x`, another host).
 */
function returnLocation(returnTo: string, params: Record<string, string | null>): string {
  const safe = safeReturnTo(returnTo);
  const hash = safe.indexOf('#');
  const withoutHash = hash < 0 ? safe : safe.slice(0, hash);
  const question = withoutHash.indexOf('?');
  const path = question < 0 ? withoutHash : withoutHash.slice(0, question);
  const query = new URLSearchParams(question < 0 ? '' : withoutHash.slice(question + 1));
  for (const [name, value] of Object.entries(params)) if (value !== null) query.set(name, value);
  return `${path}?${query.toString()}`;
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
      'The authorization must be bound to its member (decision 066): a browser-bound one needs the binding cookie its start URL set (403 otherwise, and it stays usable in the right browser); ' +
      'a loopback-bound one is a 303 to its listener with the answer, nothing used; an unbound one is 403. ' +
      'A used or expired state is 400; an `iss` that is not the registration’s issuer, or a missing one when the server advertises it (RFC 9207), is 401. ' +
      'The code exchange runs as an execution; the answer shows the connection `ready`, or not, with the reason. ' +
      'With a `returnTo` on the authorization, it is a 303 to exactly that validated path with `connectionId` and `state` added.',
  })
  @ApiParam({ name: 'registrationId', format: 'uuid' })
  @ApiQuery({ name: 'code', required: false })
  @ApiQuery({ name: 'state', required: true })
  @ApiQuery({ name: 'iss', required: false, description: 'The issuer of the authorization response (RFC 9207)' })
  @ApiQuery({ name: 'error', required: false, description: 'Sent by the authorization server instead of `code` when it did not authorize' })
  @ApiOkResponse({ type: AuthorizationOutcomeBody })
  @ApiResponse({ status: 303, description: 'To `returnTo`, with `connectionId` and `state` in its query; or, for a loopback-bound authorization, to its listener with the answer' })
  @ApiErrors(400, 401, 403, 404)
  async callback(
    @Param('registrationId') registrationId: string,
    @Query('code') code: unknown,
    @Query('state') state: unknown,
    @Query('iss') iss: unknown,
    @Query('error') error: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    const answer = await this.commands.execute(
      new CompleteAuthorization(
        { kind: 'callback', registrationId, cookies: request.cookies },
        {
          code: text(code),
          state: text(state),
          // Present means checked, even empty; a repeated `iss` becomes JSON text, which never equals an issuer.
          iss: iss === undefined ? null : typeof iss === 'string' ? iss : JSON.stringify(iss),
          error: text(error),
        },
      ),
    );
    if ('relayTo' in answer) {
      await reply.header('cache-control', 'no-store').redirect(answer.relayTo, 303);
      return;
    }
    const body = outcomeOf(answer);
    if (answer.returnTo !== null) {
      await reply.header('cache-control', 'no-store').redirect(returnLocation(answer.returnTo, { connectionId: answer.connectionId, developerTestId: answer.developerTestId, state: answer.state }), 303);
      return;
    }
    await reply.header('cache-control', 'no-store').status(200).send(body);
  }
}
