import { MemberIdentityEntity } from './member-identity.entity';
import { SessionEntity } from './session.entity';
import { SsoConfigurationEntity } from './sso-configuration.entity';
import { SsoLoginEntity } from './sso-login.entity';

/** The SSO module's entities (sessions, configurations, identities, logins in flight). */
export const SSO_ENTITIES = [SsoConfigurationEntity, MemberIdentityEntity, SsoLoginEntity, SessionEntity] as const;
