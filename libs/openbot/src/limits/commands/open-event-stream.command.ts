import { Inject, Injectable } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { newId, RateLimited, type MemberCaller } from '@openbot/domain';
import type { Pool } from 'pg';
import { Database } from '../../database/sql';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../config/runtime-config';
import { limitMessage } from '../organization-limits';
import { StreamSlotReleases } from '../stream-slot-releases';

/** What a refused stream is told to wait: streams free as others end, not at a known time. */
const STREAM_RETRY_AFTER_SECONDS = 5;
/** A slot outlives its stream's lifetime by this much, so a stream ending its last write keeps it. */
const SLOT_GRACE_SECONDS = 30;
/** Two nodes may race for the same free slot; the loser looks again this often before refusing. */
const SLOT_ATTEMPTS = 10;

/** An open event stream's hold on the caps. `release` is idempotent and never throws. */
export interface EventStreamLease {
  /** The stream ends cleanly after this long; the client resumes with Last-Event-ID. */
  readonly lifetimeMs: number;
  release(): Promise<void>;
}

/** This node's open streams (the per-node cap needs no sharing). */
@Injectable()
export class NodeStreams {
  open = 0;
}

/**
 * Opens an event stream (SSE, or a long poll that is about to wait) under its caps
 * (docs/decisions/017): `OPENBOT_STREAMS_PER_NODE` on this node, in memory, then the
 * organization's `streams` limit (`OPENBOT_ORG_STREAMS`, decision 076: many keys of one
 * organization together) and `OPENBOT_STREAMS_PER_KEY` for the caller's API key or session,
 * across nodes, each as one numbered slot row in PostgreSQL. Over any cap: 429 RateLimited with
 * a Retry-After; the organization's names the limit.
 */
export class OpenEventStream extends Command<EventStreamLease> {
  constructor(readonly caller: MemberCaller) {
    super();
  }
}

@CommandHandler(OpenEventStream)
export class OpenEventStreamHandler implements ICommandHandler<OpenEventStream> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(NodeStreams) private readonly node: NodeStreams,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
    @Inject(StreamSlotReleases) private readonly releases: StreamSlotReleases,
  ) {}

  async execute({ caller }: OpenEventStream): Promise<EventStreamLease> {
    const { streamsPerNode, streamsPerCredential, streamMaxSeconds } = this.config.limits;
    if (this.node.open >= streamsPerNode) {
      throw new RateLimited(STREAM_RETRY_AFTER_SECONDS, 'This node has too many open event streams; retry after the Retry-After seconds.');
    }
    this.node.open += 1;
    const credential = caller.apiKeyId !== null ? `key:${caller.apiKeyId}` : `session:${caller.sessionId ?? caller.memberId}`;
    const organization = `organization:${caller.organizationId}`;
    const organizationCap = this.config.organizationLimits.streams;
    const holder = newId();
    const pool = this.db.pool;
    const holdSeconds = streamMaxSeconds + SLOT_GRACE_SECONDS;
    /** The slots taken so far, freed again when a later cap refuses. */
    const taken: Array<{ holderOf: string; slot: number }> = [];
    const freeTaken = async (): Promise<void> => {
      this.node.open -= 1;
      await Promise.all(taken.map((t) => this.releases.release(t.holderOf, t.slot, holder)));
    };
    try {
      const organizationSlot = await this.takeSlot(pool, organization, holder, organizationCap, holdSeconds);
      if (organizationSlot === null) {
        throw new RateLimited(STREAM_RETRY_AFTER_SECONDS, limitMessage('streams', organizationCap), 'streams');
      }
      taken.push({ holderOf: organization, slot: organizationSlot });
      const slot = await this.takeSlot(pool, credential, holder, streamsPerCredential, holdSeconds);
      if (slot === null) {
        throw new RateLimited(STREAM_RETRY_AFTER_SECONDS, 'This credential has too many open event streams; close one or retry after the Retry-After seconds.');
      }
      taken.push({ holderOf: credential, slot });
    } catch (error) {
      await freeTaken();
      throw error;
    }
    let released = false;
    return {
      lifetimeMs: streamMaxSeconds * 1000,
      release: async () => {
        if (released) return;
        released = true;
        await freeTaken();
      },
    };
  }

  /**
   * One statement takes a free or expired slot, chosen at random among the free ones near the
   * bottom (the search never scans the whole cap): streams of one key opened at the same moment
   * (a backend streaming many users' Chats) rarely choose the same slot. Two that do: the second waits for the first's insert, then its update finds the
   * slot live and takes nothing, and it looks again. So the cap is never exceeded, and a lost race
   * is not a refusal while a slot is free.
   */
  private async takeSlot(pool: Pool, credential: string, holder: string, cap: number, holdSeconds: number): Promise<number | null> {
    for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
      const { rows, rowCount } = await pool.query<{ slot: number }>({
        name: 'limits.take_stream_slot',
        text: `WITH free AS (
            -- A free slot is always among the first (live + 1): search only a little past that.
            SELECT s.slot FROM generate_series(1, LEAST($3::int,
              (SELECT count(*)::int FROM event_stream_slots l WHERE l.credential = $1 AND l.expires_at > now()) + 32)) AS s(slot)
            WHERE NOT EXISTS (SELECT 1 FROM event_stream_slots e WHERE e.credential = $1 AND e.slot = s.slot AND e.expires_at > now())
            ORDER BY random()
            LIMIT 1
          )
          INSERT INTO event_stream_slots AS e (credential, slot, holder, node_id, expires_at)
          SELECT $1, slot, $2, $4, now() + make_interval(secs => $5) FROM free
          ON CONFLICT (credential, slot) DO UPDATE SET holder = EXCLUDED.holder, node_id = EXCLUDED.node_id, expires_at = EXCLUDED.expires_at
            WHERE e.expires_at <= now()
          RETURNING slot`,
        values: [credential, holder, cap, this.config.nodeId, holdSeconds],
      });
      if (rowCount === 1) return rows[0]!.slot;
      // No free slot at all (as opposed to a lost race): refuse without looking again.
      if (!(await this.anyFree(pool, credential, cap))) return null;
    }
    return null;
  }

  private async anyFree(pool: Pool, credential: string, cap: number): Promise<boolean> {
    const { rows } = await pool.query<{ live: number }>({
      name: 'limits.count_stream_slots',
      text: 'SELECT count(*)::int AS live FROM event_stream_slots WHERE credential = $1 AND expires_at > now()',
      values: [credential],
    });
    return rows[0]!.live < cap;
  }
}
