import { ApiProperty } from '@nestjs/swagger';
import { MEMBER_ROLES, type MemberRole } from '@openbot/domain';
import { SSO_DEFAULT_ROLES, type SessionView, type SsoConfigurationView, type SsoDefaultRole } from '@openbot/features';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsString, Matches, MaxLength, MinLength } from 'class-validator';

/** A lower- or upper-case DNS name of at least two labels, no wildcard. */
const DOMAIN = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

export class ConfigureSsoRequest {
  @ApiProperty({
    example: 'https://login.example.com/realms/acme',
    maxLength: 2000,
    description:
      'The OpenID provider’s issuer identifier, exactly as its ID tokens carry it; its endpoints are discovered from ' +
      '`<issuer>/.well-known/openid-configuration` at each login. Must pass the egress policy.',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(2000)
  @Matches(/^https?:\/\//, { message: 'issuer must be an http(s) URL' })
  issuer!: string;

  @ApiProperty({ example: 'openbot', maxLength: 500 })
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  clientId!: string;

  @ApiProperty({ maxLength: 4096, description: 'Stored sealed; never returned' })
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  clientSecret!: string;

  @ApiProperty({
    type: [String],
    example: ['example.com'],
    minItems: 1,
    maxItems: 100,
    description: 'Email domains (exact, case-insensitive) whose verified addresses may sign in',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(DOMAIN, { each: true, message: 'each allowedDomains entry must be a domain name such as example.com' })
  allowedDomains!: string[];

  @ApiProperty({
    enum: SSO_DEFAULT_ROLES,
    description: 'The role of a member created at first sign-in; the credential setting it needs `members.manage` and every permission of the role (403 otherwise)',
  })
  @IsIn(SSO_DEFAULT_ROLES, { message: `defaultRole must be one of ${SSO_DEFAULT_ROLES.join(', ')}` })
  defaultRole!: SsoDefaultRole;
}

export class SsoConfigurationBody {
  @ApiProperty({ format: 'uuid' })
  organizationId!: string;

  @ApiProperty()
  issuer!: string;

  @ApiProperty()
  clientId!: string;

  @ApiProperty({ type: [String] })
  allowedDomains!: string[];

  @ApiProperty({ enum: SSO_DEFAULT_ROLES })
  defaultRole!: SsoDefaultRole;

  @ApiProperty({ description: 'Rises by one on every change' })
  revision!: number;

  @ApiProperty({ type: String, nullable: true, description: 'The redirect URI to register at the provider; null while OPENBOT_PUBLIC_URL is unset' })
  redirectUri!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Where members start signing in; null while OPENBOT_PUBLIC_URL is unset' })
  loginUrl!: string | null;

  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
}

export class SessionBody {
  @ApiProperty({ format: 'uuid' })
  memberId!: string;

  @ApiProperty({ format: 'uuid' })
  organizationId!: string;

  @ApiProperty({ enum: MEMBER_ROLES })
  role!: MemberRole;

  @ApiProperty({ description: 'Send it as the `x-csrf-token` header on POST, PUT, PATCH and DELETE requests made with the session cookie' })
  csrfToken!: string;

  @ApiProperty({ format: 'date-time' })
  expiresAt!: string;
}

/** Lists every field explicitly, so a new column (the sealed secret's record) never leaks by default. */
export function toSsoConfigurationBody(view: SsoConfigurationView): SsoConfigurationBody {
  return {
    organizationId: view.organizationId,
    issuer: view.issuer,
    clientId: view.clientId,
    allowedDomains: [...view.allowedDomains],
    defaultRole: view.defaultRole,
    revision: view.revision,
    redirectUri: view.redirectUri,
    loginUrl: view.loginUrl,
    updatedAt: new Date(view.updatedAt).toISOString(),
  };
}

export function toSessionBody(view: SessionView): SessionBody {
  return {
    memberId: view.memberId,
    organizationId: view.organizationId,
    role: view.role,
    csrfToken: view.csrfToken,
    expiresAt: new Date(view.expiresAt).toISOString(),
  };
}
