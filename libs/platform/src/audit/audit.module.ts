import { Module } from '@nestjs/common';
import { ListAuditEventsHandler } from './queries/list-audit-events.query';

@Module({ providers: [ListAuditEventsHandler] })
export class AuditModule {}
