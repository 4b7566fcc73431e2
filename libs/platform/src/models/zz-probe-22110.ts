import { BotsModule } from '../../../features/src/bots/bots.module';
export const probe = BotsModule;
