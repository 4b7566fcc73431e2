import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class AuthorizeConnectionRequest {
  @ApiPropertyOptional({
    maxLength: 2000,
    example: '/settings/apps',
    description: 'A path of this server (one leading `/`) to send the browser to after the callback, with `connectionId` and `state` added to its query',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  returnTo?: string;
}

export class AuthorizationUrlBody {
  @ApiProperty({
    description:
      'Open it in a browser: the authorization server’s authorization endpoint with PKCE S256, a state valid once for 10 minutes, the RFC 8707 `resource` and the scope. ' +
      'It redirects to `GET /v1/oauth/{registrationId}/callback`.',
  })
  authorizationUrl!: string;

  @ApiProperty({ format: 'uuid', description: 'The sign-in preparation (discovery and registration) that ran as an execution' })
  executionId!: string;
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
