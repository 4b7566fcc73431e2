import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { InvalidInput, type InputIssue } from '@openbot/domain';
import { CONNECTION_OWNERS, CONNECTION_STATES, type AppView, type ConnectionOwner, type ConnectionState, type ConnectionView, type GivenValue } from '@openbot/features';
import { IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';


export class RegisterAppRequest {
  @ApiProperty({
    example: 'https://mcp.example.com/mcp',
    maxLength: 2000,
    description: 'An MCP Server Card URL, or a Streamable HTTP endpoint without one. Read once through the egress policy.',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(2000)
  url!: string;
}

export class RemoteInputBody {
  @ApiPropertyOptional()
  description?: string;
  @ApiPropertyOptional()
  isRequired?: boolean;
  @ApiPropertyOptional()
  isSecret?: boolean;
  @ApiPropertyOptional()
  default?: string;
  @ApiPropertyOptional({ type: [String] })
  choices?: string[];
  @ApiPropertyOptional({ description: 'A fixed value the client sends as it is' })
  value?: string;
}

export class RemoteHeaderBody extends RemoteInputBody {
  @ApiProperty()
  name!: string;
}

export class RemoteBody {
  @ApiProperty({ enum: ['streamable-http'] })
  type!: 'streamable-http';

  @ApiProperty({ description: 'The endpoint; `{name}` parts are variables' })
  url!: string;

  @ApiProperty({ type: [RemoteHeaderBody] })
  headers!: RemoteHeaderBody[];

  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/RemoteInputBody' } })
  variables!: Record<string, RemoteInputBody>;
}

export class AppBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'The card name (reverse DNS), or the host of a bare endpoint' })
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: [RemoteBody] })
  remotes!: RemoteBody[];

  @ApiProperty({ description: 'Whether the URL served a Server Card (false: a bare Streamable HTTP endpoint)' })
  card!: boolean;

  @ApiProperty()
  url!: string;

  @ApiProperty({ type: String, nullable: true })
  version!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class AppPage {
  @ApiProperty({ type: [AppBody] })
  data!: AppBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toAppBody(app: AppView): AppBody {
  return {
    id: app.id,
    name: app.name,
    title: app.title,
    description: app.description,
    remotes: app.remotes.map((r) => ({ type: r.type, url: r.url, headers: r.headers.map((h) => ({ ...h })), variables: { ...r.variables } })) as RemoteBody[],
    card: app.card,
    url: app.url,
    version: app.version,
    createdAt: app.createdAt.toISOString(),
  };
}

const VALUE_DESCRIPTION = 'A literal value (stored sealed, answered as null) or a Vault reference `{ vaultItemId, field, prefix? }`';

export class CreateConnectionRequest {
  @ApiPropertyOptional({ description: "The `url` of one of the App's remotes (default: the first)", maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  remote?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `URL variables of the remote. ${VALUE_DESCRIPTION}` })
  @IsOptional()
  @IsObject()
  variables?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `Headers sent with every request. ${VALUE_DESCRIPTION}` })
  @IsOptional()
  @IsObject()
  headers?: Record<string, unknown>;

  @ApiPropertyOptional({ enum: CONNECTION_OWNERS, default: 'organization', description: '`member`: the caller’s own connection (only its member, owners and admins see it; only its work may use it)' })
  @IsOptional()
  @IsIn(CONNECTION_OWNERS, { message: `owner must be one of ${CONNECTION_OWNERS.join(', ')}` })
  owner?: ConnectionOwner;
}

/** The values of `variables` or `headers`: strings or Vault references, at most 50, each at most 8 KiB. */
export function givenValues(field: 'variables' | 'headers', values: Record<string, unknown> | undefined): Record<string, GivenValue> {
  if (values === undefined) return {};
  const issues: InputIssue[] = [];
  const out: Record<string, GivenValue> = {};
  const entries = Object.entries(values);
  if (entries.length > 50) issues.push({ path: field, message: `${field} has more than 50 entries` });
  for (const [name, value] of entries) {
    if (typeof value === 'string') {
      if (value.length > 8192) issues.push({ path: `${field}.${name}`, message: 'a value is at most 8192 characters' });
      else out[name] = value;
      continue;
    }
    const ref = value as { vaultItemId?: unknown; field?: unknown; prefix?: unknown } | null;
    if (ref !== null && typeof ref === 'object' && typeof ref.vaultItemId === 'string' && typeof ref.field === 'string' && (ref.prefix === undefined || typeof ref.prefix === 'string')) {
      out[name] = { vaultItemId: ref.vaultItemId, field: ref.field, ...(ref.prefix === undefined ? {} : { prefix: ref.prefix as string }) };
      continue;
    }
    issues.push({ path: `${field}.${name}`, message: 'a value is a string or { vaultItemId, field, prefix? }' });
  }
  if (issues.length > 0) throw new InvalidInput(issues);
  return out;
}

export class CreatedConnectionBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ format: 'uuid' })
  appId!: string;

  @ApiProperty({ enum: CONNECTION_STATES })
  state!: ConnectionState;

  @ApiProperty({ description: 'Starts at 1 and rises by 1 with each accepted change' })
  revision!: number;
}

export class ConnectionBody extends CreatedConnectionBody {
  @ApiProperty({ enum: CONNECTION_OWNERS })
  owner!: ConnectionOwner;

  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'The member of a member connection' })
  memberId!: string | null;

  @ApiProperty({ description: 'The url of the selected remote' })
  remote!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Each variable: its Vault reference as given, or null for a literal value (never shown)' })
  variables!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Each header: its Vault reference as given, or null for a literal value (never shown)' })
  headers!: Record<string, unknown>;

  @ApiProperty({ type: String, nullable: true, enum: ['legacy', 'modern'], description: '`legacy`: 2025 revisions (initialize, sessions); `modern`: the stateless 2026-07-28 revision' })
  era!: 'legacy' | 'modern' | null;

  @ApiProperty({ type: String, nullable: true })
  protocolVersion!: string | null;

  @ApiProperty({ type: [String], description: 'From the last discovery: a cut tool list, refused tools' })
  warnings!: string[];

  @ApiProperty({ type: String, nullable: true, description: 'Why the last probe failed' })
  category!: string | null;

  @ApiProperty({ type: String, nullable: true })
  errorId!: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  checkedAt!: string | null;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class ConnectionPage {
  @ApiProperty({ type: [ConnectionBody] })
  data!: ConnectionBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export function toConnectionBody(c: ConnectionView): ConnectionBody {
  return {
    id: c.id,
    appId: c.appId,
    state: c.state,
    revision: c.revision,
    owner: c.owner,
    memberId: c.memberId,
    remote: c.remote,
    variables: { ...c.variables },
    headers: { ...c.headers },
    era: c.era,
    protocolVersion: c.protocolVersion,
    warnings: [...c.warnings],
    category: c.category,
    errorId: c.errorId,
    checkedAt: c.checkedAt === null ? null : c.checkedAt.toISOString(),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export class ConnectionToolBody {
  @ApiProperty({ description: 'The name on the server' })
  name!: string;

  @ApiProperty({ type: String, nullable: true })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true })
  description!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments' })
  inputSchema!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The server’s hints (readOnlyHint, idempotentHint, …): a call is repeated only when one of the first two is true' })
  annotations!: Record<string, boolean>;
}

export class ConnectionToolPage {
  @ApiProperty({ type: [ConnectionToolBody] })
  data!: ConnectionToolBody[];

  @ApiProperty({ type: String, nullable: true })
  next!: string | null;
}

export class ExecutionStartedBody {
  @ApiProperty({ format: 'uuid' })
  executionId!: string;
}

export class ToolViewBody {
  @ApiProperty({ description: 'The tool the View belongs to' })
  toolName!: string;

  @ApiProperty({ example: 'ui://weather/forecast.html' })
  uri!: string;

  @ApiProperty({ example: 'text/html;profile=mcp-app' })
  mimeType!: string;

  @ApiProperty({ description: 'The HTML to render in a sandboxed frame' })
  html!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The CSP domains the View asks for (`connectDomains`, `resourceDomains`, `frameDomains`, `baseUriDomains`), as the server gave them' })
  csp!: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The permissions the View asks for (camera, microphone, geolocation, clipboardWrite …)' })
  permissions!: Record<string, unknown>;

  @ApiProperty({ type: String, nullable: true, description: 'A dedicated origin the View asks to be served from' })
  domain!: string | null;
}
