import { Module } from '@nestjs/common';
import { ListUsageHandler } from './queries/list-usage.query';

@Module({ providers: [ListUsageHandler] })
export class UsageModule {}
