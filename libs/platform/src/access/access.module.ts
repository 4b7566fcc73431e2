import { Module } from '@nestjs/common';
import { AuthenticateBearerHandler } from './commands/authenticate-bearer.command';

@Module({ providers: [AuthenticateBearerHandler] })
export class AccessModule {}
