import { Client } from 'pg';
import type { Queryable } from '../base/ports';
import { holdPresence, nodePresent, ownedByAbsentNodes, PRESENCE_LOCK_CLASS } from '../sql/presence';

/**
 * This node's presence: a shared advisory lock keyed by its node ID, held by a connection of its
 * own (docs/decisions/026-dead-node-detection.md). When the process dies PostgreSQL closes the
 * connection and drops the lock at once; peers then take over its executions without waiting for
 * the lease. A lost connection is opened again at once; the lease stays the fallback for
 * partitions and half-open connections. Shared, so two engines with one node ID never block.
 */
export class NodePresence {
  private client: Client | null = null;
  private stopped = true;

  constructor(
    private readonly connectionString: string,
    private readonly nodeId: string,
  ) {}

  /** True while this node's lock is held (false between a lost connection and its reconnect). */
  get held(): boolean {
    return this.client !== null;
  }

  /** Resolves once the lock is held: before this node owns anything, peers must be able to see it. */
  async start(): Promise<void> {
    this.stopped = false;
    for (let attempt = 0; !this.stopped; attempt++) {
      if (await this.connect()) return;
      if (attempt >= 50) throw new Error('could not open the node presence connection');
      await pause(Math.min(2_000, 50 * 2 ** attempt));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<boolean> {
    const client = new Client({ connectionString: this.connectionString, application_name: `openbot presence ${this.nodeId}`.slice(0, 63) });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query({ ...holdPresence, values: [PRESENCE_LOCK_CLASS, this.nodeId] });
    } catch {
      await client.end().catch(() => undefined);
      return false;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return true;
    }
    client.once('end', () => {
      if (this.client === client) this.client = null;
      if (!this.stopped) void this.reconnect();
    });
    this.client = client;
    return true;
  }

  /** A lost presence connection comes back quickly: peers wait a grace period before they act. */
  private async reconnect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      if (await this.connect()) return;
      await pause(Math.min(1_000, 25 * 2 ** attempt));
    }
  }
}

export interface DeadNodeWatchOptions {
  /** How often this node looks for executions of absent owners (default 250 ms). */
  readonly everyMs?: number;
  /** How long an owner must stay absent before its executions are taken over (default 1,000 ms). */
  readonly graceMs?: number;
}

/**
 * Looks for live executions leased by nodes that hold no presence lock. An owner absent for
 * `graceMs` (a live node whose presence connection blinked is back well before) has its
 * executions claimed here; the claim checks the owner's absence again under the row lock, and
 * takes over as any claim does (generation + 1, EXE-03). First claim wins; others find it leased.
 */
export class DeadNodeWatch {
  private timer: NodeJS.Timeout | null = null;
  private readonly absentSince = new Map<string, number>();
  private ticking = false;
  private readonly everyMs: number;
  private readonly graceMs: number;

  constructor(
    private readonly db: Queryable,
    private readonly nodeId: string,
    private readonly claim: (executionId: string, deadOwner: string) => Promise<unknown>,
    options: DeadNodeWatchOptions = {},
  ) {
    this.everyMs = options.everyMs ?? 250;
    this.graceMs = options.graceMs ?? 1_000;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const { rows } = await this.db.query<{ id: string; owner_node: string }>({ ...ownedByAbsentNodes, values: [this.nodeId, PRESENCE_LOCK_CLASS, 500] });
      const now = Date.now();
      const absent = new Set(rows.map((r) => r.owner_node));
      for (const owner of [...this.absentSince.keys()]) if (!absent.has(owner)) this.absentSince.delete(owner);
      for (const owner of absent) if (!this.absentSince.has(owner)) this.absentSince.set(owner, now);
      const due = rows.filter((r) => now - this.absentSince.get(r.owner_node)! >= this.graceMs);
      await Promise.allSettled(due.map((r) => this.claim(r.id, r.owner_node)));
    } catch {
      // The database is unreachable: the next tick looks again, and leases stay the fallback.
    } finally {
      this.ticking = false;
    }
  }
}

/** Whether node `nodeId` holds its presence lock now (read under a claim's row lock). */
export async function isNodePresent(db: Queryable, nodeId: string): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>({ ...nodePresent, values: [nodeId, PRESENCE_LOCK_CLASS] });
  return rows[0]?.present === true;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
