import { AppDeveloperTestEntity } from './app-developer-test.entity';
import { AppIndexEntryEntity } from './app-index-entry.entity';
import { AppProofEntity } from './app-proof.entity';

export const APP_CATALOG_ENTITIES = [AppProofEntity, AppIndexEntryEntity, AppDeveloperTestEntity] as const;
