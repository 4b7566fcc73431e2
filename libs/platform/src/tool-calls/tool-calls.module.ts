import { Global, Module } from '@nestjs/common';
import { ToolCalls } from './tool-calls';

/** ToolCalls (decision 078): the one way a workflow answers a tool call, beside ModelCalls. */
@Global()
@Module({ providers: [ToolCalls], exports: [ToolCalls] })
export class ToolCallsModule {}
