import { Controller, Get, Inject, Res } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { CheckReadiness } from '@openbot/platform';
import type { FastifyReply } from 'fastify';
import { Access } from '../auth/access.decorator';

class HealthBody {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}

class ReadinessBody {
  @ApiProperty({ enum: ['ready', 'not-ready'] })
  status!: 'ready' | 'not-ready';

  @ApiProperty({ enum: ['up', 'down'] })
  database!: 'up' | 'down';

  @ApiProperty({ enum: ['open', 'closed'], description: 'Closed while migrations are pending (MIG-02)' })
  gate!: 'open' | 'closed';

  @ApiProperty({ type: [String] })
  pendingMigrations!: string[];
}

@ApiTags('health')
@Access('public')
@Controller()
export class HealthController {
  constructor(@Inject(QueryBus) private readonly queries: QueryBus) {}

  @Get('healthz')
  @ApiOkResponse({ type: HealthBody, description: 'The process is alive' })
  healthz(): HealthBody {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOkResponse({ type: ReadinessBody, description: 'The database is reachable and the startup gate is open' })
  @ApiServiceUnavailableResponse({ type: ReadinessBody, description: 'Not ready: database down or migrations pending' })
  async readyz(@Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessBody> {
    const readiness = await this.queries.execute(new CheckReadiness());
    void reply.status(readiness.ready ? 200 : 503);
    return {
      status: readiness.ready ? 'ready' : 'not-ready',
      database: readiness.database,
      gate: readiness.gate,
      pendingMigrations: [...readiness.pendingMigrations],
    };
  }
}
