import { OAuthAuthorizationEntity } from './oauth-authorization.entity';
import { OAuthGrantResultEntity } from './oauth-grant-result.entity';
import { OAuthGrantUseEntity } from './oauth-grant-use.entity';
import { OAuthGrantEntity } from './oauth-grant.entity';
import { OAuthRegistrationEntity } from './oauth-registration.entity';

export const APP_OAUTH_ENTITIES = [OAuthRegistrationEntity, OAuthAuthorizationEntity, OAuthGrantEntity, OAuthGrantResultEntity, OAuthGrantUseEntity] as const;
