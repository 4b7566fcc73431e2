import { ApiModule } from '../../../api/src/api.module';
export const probe = ApiModule;
