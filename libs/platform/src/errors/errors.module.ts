import { Module } from '@nestjs/common';
import { RecordFailureHandler } from './commands/record-failure.command';

@Module({ providers: [RecordFailureHandler] })
export class ErrorsModule {}
