import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class AuthorizeConnectionRequest {
  @ApiPropertyOptional({
    maxLength: 2000,
    example: '/settings/apps',
    description:
      'A path of this server to send the browser to after the callback, with `connectionId` and `state` added to its query. ' +
      'The rules of SSO’s `returnTo`: one leading `/`, never `//` or a backslash, no control characters, and it must resolve on this server; anything else is 400.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  returnTo?: string;

  @ApiPropertyOptional({
    maxLength: 500,
    example: 'http://127.0.0.1:53682/callback',
    description:
      'A listener on your own machine (RFC 8252 loopback: `http://127.0.0.1:<port>/<path>` or `http://[::1]:<port>/<path>`). ' +
      'The callback relays the authorization server’s answer there without using it; you then post it with your own credential to `POST /v1/oauth/authorizations/complete`. ' +
      'Required with an API key: a key has no browser to bind (decision 066). The CLI’s `connections authorize` does all of it.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  loopbackRedirect?: string;
}

export class AuthorizationUrlBody {
  @ApiProperty({ format: 'uuid', description: 'The authorization request: valid once, for 10 minutes, for the member who asked only' })
  authorizationId!: string;

  @ApiProperty({
    description:
      'The URL to open. `browser`: OpenBot’s start URL, `GET /v1/oauth/authorizations/{id}/start`, to open in your own signed-in browser; it binds that browser and goes on to the authorization server. ' +
      '`loopback`: the authorization server’s authorization endpoint (PKCE S256, state, the RFC 8707 `resource`, the scope, `prompt=consent`), which returns to `GET /v1/oauth/{registrationId}/callback` and from there to your listener.',
  })
  authorizationUrl!: string;

  @ApiProperty({ enum: ['browser', 'loopback'], description: 'How the browser leg is bound to you: your signed-in browser, or your loopback listener' })
  binding!: 'browser' | 'loopback';

  @ApiProperty({ format: 'uuid', description: 'The sign-in preparation (discovery and registration) that ran as an execution' })
  executionId!: string;
}

export class BindLoopbackRequest {
  @ApiProperty({ maxLength: 500, example: 'http://127.0.0.1:53682/callback', description: 'A listener on your own machine: `http://127.0.0.1:<port>/<path>` or `http://[::1]:<port>/<path>`' })
  @IsString()
  @MaxLength(500)
  redirect!: string;
}

export class LoopbackAuthorizationBody {
  @ApiProperty({ description: 'The authorization server’s URL to open in any browser; its answer comes back to your listener through OpenBot’s callback' })
  authorizationUrl!: string;
}

export class CompleteAuthorizationRequest {
  @ApiProperty({ maxLength: 500, description: 'The `state` your listener received' })
  @IsString()
  @MaxLength(500)
  state!: string;

  @ApiPropertyOptional({ maxLength: 4000, description: 'The `code` your listener received' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  code?: string;

  @ApiPropertyOptional({ maxLength: 2000, description: 'The `iss` your listener received (RFC 9207), when there was one' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  iss?: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'The `error` your listener received instead of a code' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  error?: string;
}

export class AuthorizationOutcomeBody {
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The connection authorized (null for a developer test)' })
  connectionId!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The developer test whose developer signed in (null for a connection)' })
  developerTestId!: string | null;

  @ApiProperty({
    enum: ['ready', 'needs_authorization', 'failed', 'deleted', 'running', 'completed'],
    description: 'The connection’s state after the code exchange; for a developer test, its state (`running` again once its grant is installed)',
  })
  state!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Why it is not ready: the authorization server’s `error` (e.g. `access_denied`), or the exchange’s failure (`invalid_grant`, ...)' })
  reason!: string | null;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The code exchange execution (null when the server sent an error instead of a code)' })
  executionId!: string | null;
}

/** A Client ID Metadata Document (the MCP authorization spec's CIMD; the client metadata of RFC 7591 served at the `client_id` URL). */
export class ClientMetadataDocumentBody {
  @ApiProperty({ format: 'uri', example: 'https://openbot.example.com/v1/oauth/0b6c6a2e-1f0e-4c55-9a57-3f4f2b1d8c11/client-metadata.json', description: 'This document’s own URL: the OAuth `client_id`' })
  client_id!: string;

  @ApiProperty({ example: 'OpenBot' })
  client_name!: string;

  @ApiPropertyOptional({ format: 'uri', description: 'OpenBot’s public URL' })
  client_uri?: string;

  @ApiProperty({ type: [String], description: 'The one redirect URI of this registration: `GET /v1/oauth/{registrationId}/callback`' })
  redirect_uris!: string[];

  @ApiProperty({ type: [String], example: ['authorization_code', 'refresh_token'] })
  grant_types!: string[];

  @ApiProperty({ type: [String], example: ['code'] })
  response_types!: string[];

  @ApiProperty({ enum: ['none'], description: 'A public client: PKCE S256, no shared secret (CIMD forbids secret-based methods)' })
  token_endpoint_auth_method!: 'none';

  @ApiProperty({ enum: ['web'] })
  application_type!: 'web';
}
