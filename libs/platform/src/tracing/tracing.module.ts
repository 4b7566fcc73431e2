import { Global, Module } from '@nestjs/common';
import { OpenbotTracing } from './openbot-tracing';

/** The node's traces (docs/decisions/040-traces.md); global: the engine, the model calls and the HTTP layer record into it. */
@Global()
@Module({ providers: [OpenbotTracing], exports: [OpenbotTracing] })
export class TracingModule {}
