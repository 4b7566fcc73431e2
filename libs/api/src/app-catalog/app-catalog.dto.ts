import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { AppIndexEntryView, DeveloperTestView, ProofView } from '@openbot/features';
import { IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

const VALUE_DESCRIPTION = 'A literal value (stored sealed, answered as null) or a Vault reference `{ vaultItemId, field, prefix? }`';

export class CreateProofRequest {
  @ApiProperty({ example: 'mcp.example.com', maxLength: 300, description: "The App's host (with its port when it has one); it must serve the token at `https://<domain>/.well-known/openbot-app-proof`." })
  @IsString()
  @MinLength(1)
  @MaxLength(300)
  domain!: string;
}

export class ProofBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  appId!: string;

  @ApiProperty()
  domain!: string;

  @ApiProperty({ description: 'The challenge to serve, as the whole body, at `https://<domain>/.well-known/openbot-app-proof`' })
  token!: string;

  @ApiProperty({ enum: ['pending', 'verified', 'failed'] })
  state!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'the domain answered HTTP 404 at /.well-known/openbot-app-proof',
    description:
      'With `failed`: why, as a fixed phrase (the HTTP status, an answer that is not the token, an answer over the size cap, or why the domain could not be reached: the egress policy, the connection, the TLS certificate); never the domain’s answer. Null otherwise',
  })
  failureReason!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  verifiedAt!: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt!: string;
}

export class ProofList {
  @ApiProperty({ type: [ProofBody] })
  data!: ProofBody[];
}

export class AppIndexEntryBody {
  @ApiProperty({ format: 'uuid' })
  appId!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: [String], description: 'Tool names, as the last crawl listed them' })
  tools!: string[];

  @ApiProperty({ description: 'The server answered the crawl with 401: it lists its tools only to an authorized connection' })
  needsAuthorization!: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  indexedAt!: string;
}

export class AppIndexPage {
  @ApiProperty({ type: [AppIndexEntryBody] })
  data!: AppIndexEntryBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toProofBody(view: ProofView): ProofBody {
  return {
    id: view.id,
    appId: view.appId,
    domain: view.domain,
    token: view.token,
    state: view.state,
    failureReason: view.failureReason,
    verifiedAt: view.verifiedAt?.toISOString() ?? null,
    createdAt: view.createdAt.toISOString(),
  };
}

export function toAppIndexEntryBody(view: AppIndexEntryView): AppIndexEntryBody {
  return { ...view, tools: [...view.tools], indexedAt: view.indexedAt.toISOString() };
}

export class StartDeveloperTestRequest {
  @ApiPropertyOptional({ maxLength: 2000, description: "The `url` of one of the App's remotes (default: the first)" })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  remote?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `URL variables of the remote, as for an App connection. ${VALUE_DESCRIPTION}` })
  @IsOptional()
  @IsObject()
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `Headers sent with every request of the test, as for an App connection. ${VALUE_DESCRIPTION}` })
  @IsOptional()
  @IsObject()
  headers?: Record<string, unknown>;
}

export class DeveloperTestStartedBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  executionId!: string;
}

export class DeveloperTestDeletedBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;
}

export class DeveloperTestBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({
    enum: ['running', 'needs_authorization', 'completed', 'failed'],
    description: '`needs_authorization`: the server answered 401; its developer signs in at `authorizationUrl` (the developer’s own grant), then the test connects again',
  })
  state!: string;

  @ApiProperty({ type: Object, nullable: true, description: '`{ state, era, protocolVersion, category, closed }` of the pre-publish connection; null while running' })
  connection!: unknown;

  @ApiProperty({ type: [String], nullable: true, description: 'Tool names listed; null while running' })
  tools!: string[] | null;

  @ApiProperty({ format: 'uuid' })
  executionId!: string;

  @ApiProperty({ format: 'uuid', description: 'The member who started it' })
  memberId!: string;

  @ApiProperty()
  remote!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The URL variables given: a literal is null (sealed, removed with the run’s end), a Vault reference as given' })
  variables!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The headers given, like `variables`' })
  headers!: Record<string, unknown>;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'While `needs_authorization`: OpenBot’s start URL of the developer’s sign-in, bound to them (decision 066): open it in your signed-in browser, ' +
      'or with an API key bind it to your loopback listener (`POST /v1/oauth/authorizations/{id}/loopback`). Shown to the member who started the test only.',
  })
  authorizationUrl!: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description:
      'The pending authorization behind `authorizationUrl`, the `{id}` of `POST /v1/oauth/authorizations/{id}/loopback` (as `authorizationId` in the answer of `POST /v1/connections/{id}/authorize`); ' +
      'null exactly when `authorizationUrl` is: no sign-in pending, or another member reads the test. Also in the event `developer_test.needs_authorization`.',
  })
  authorizationId!: string | null;
}

export function toDeveloperTestBody(view: DeveloperTestView): DeveloperTestBody {
  return { ...view, tools: view.tools === null ? null : [...view.tools], variables: { ...view.variables }, headers: { ...view.headers } };
}
