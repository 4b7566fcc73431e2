import { AppConnectionScopeEntity } from './app-connection-scope.entity';
import { AppConnectionToolsEntity } from './app-connection-tools.entity';
import { AppConnectionEntity } from './app-connection.entity';
import { AppEntity } from './app.entity';
import { AppViewEntity } from './app-view.entity';

export const APPS_ENTITIES = [AppEntity, AppConnectionEntity, AppConnectionToolsEntity, AppConnectionScopeEntity, AppViewEntity] as const;
