import { Global, Module } from '@nestjs/common';
import { CheckReadinessHandler } from './queries/check-readiness.query';
import { StartupGate } from './startup-gate';

@Global()
@Module({ providers: [StartupGate, CheckReadinessHandler], exports: [StartupGate] })
export class HealthModule {}
