import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { Database } from '../../database/sql';
import { StartupGate } from '../startup-gate';

export interface Readiness {
  readonly ready: boolean;
  readonly database: 'up' | 'down';
  readonly gate: 'open' | 'closed';
  readonly pendingMigrations: readonly string[];
}

/** `/readyz` answers within 1 second whatever the database does (docs/http-api.md). */
const DATABASE_PROBE_MS = 900;

export class CheckReadiness extends Query<Readiness> {}

@QueryHandler(CheckReadiness)
export class CheckReadinessHandler implements IQueryHandler<CheckReadiness> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(StartupGate) private readonly gate: StartupGate,
  ) {}

  async execute(): Promise<Readiness> {
    const database = (await this.probe()) ? 'up' : 'down';
    // With the database down the gate keeps its last known state (it never closes once open).
    const open = database === 'up' ? await this.gate.check() : this.gate.isOpen;
    const gate = open ? 'open' : 'closed';
    return { ready: database === 'up' && gate === 'open', database, gate, pendingMigrations: this.gate.pendingMigrations };
  }

  private async probe(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), DATABASE_PROBE_MS)));
    const query = this.db.count('SELECT 1').then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
