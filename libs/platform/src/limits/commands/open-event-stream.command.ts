import { Inject, Injectable } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { newId, RateLimited, type MemberCaller } from '@openbot/domain';
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
    const holdSeconds = streamMaxSeconds + SLOT_GRACE_SECONDS;
    let slots: TakenSlots;
    try {
      slots = await this.takeSlots({ organization, organizationCap, credential, credentialCap: streamsPerCredential, holder, holdSeconds });
    } catch (error) {
      this.node.open -= 1;
      throw error;
    }
    if (slots.refused !== null) {
      this.node.open -= 1;
      throw slots.refused === 'organization'
        ? new RateLimited(STREAM_RETRY_AFTER_SECONDS, limitMessage('streams', organizationCap), 'streams')
        : new RateLimited(STREAM_RETRY_AFTER_SECONDS, 'This credential has too many open event streams; close one or retry after the Retry-After seconds.');
    }
    const taken = [
      { credential: organization, slot: slots.organizationSlot },
      { credential, slot: slots.credentialSlot },
    ];
    let released = false;
    return {
      lifetimeMs: streamMaxSeconds * 1000,
      release: async () => {
        if (released) return;
        released = true;
        this.node.open -= 1;
        // Both rows go in one DELETE.
        await this.releases.release(taken, holder);
      },
    };
  }

  /**
   * One statement takes a free or expired organization slot and, only if it got one, a free or
   * expired credential slot, each chosen at random among the free ones near the bottom (the
   * search never scans the whole cap): streams opened at the same moment (a backend streaming
   * many users' Chats) rarely choose the same slot. Two that do: the second waits for the first's
   * insert, then its update finds the slot live and takes nothing. The statement also says whether
   * its snapshot saw a free slot at all, which tells "cap full" (refuse at once) from "lost a race"
   * (look again, up to SLOT_ATTEMPTS). An organization slot taken without its credential slot is
   * freed before refusing or looking again. So neither cap is ever exceeded, and a lost race is
   * not a refusal while a slot is free.
   */
  private async takeSlots(ask: SlotRequest): Promise<TakenSlots> {
    let lost: 'organization' | 'credential' = 'organization';
    for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
      const row = (await this.db.one<{ organization_slot: number | null; organization_free: boolean; credential_slot: number | null; credential_free: boolean }>({
        name: 'limits.take_stream_slots',
        text: `WITH organization_free AS (
            -- A free slot is always among the first (live + 1): search only a little past that.
            SELECT s.slot FROM generate_series(1, LEAST($2::int,
              (SELECT count(*)::int FROM event_stream_slots l WHERE l.credential = $1 AND l.expires_at > now()) + 32)) AS s(slot)
            WHERE NOT EXISTS (SELECT 1 FROM event_stream_slots e WHERE e.credential = $1 AND e.slot = s.slot AND e.expires_at > now())
            ORDER BY random()
            LIMIT 1
          ), organization_taken AS (
            INSERT INTO event_stream_slots AS e (credential, slot, holder, node_id, expires_at)
            SELECT $1, slot, $5, $6, now() + make_interval(secs => $7) FROM organization_free
            ON CONFLICT (credential, slot) DO UPDATE SET holder = EXCLUDED.holder, node_id = EXCLUDED.node_id, expires_at = EXCLUDED.expires_at
              WHERE e.expires_at <= now()
            RETURNING slot
          ), credential_free AS (
            SELECT s.slot FROM generate_series(1, LEAST($4::int,
              (SELECT count(*)::int FROM event_stream_slots l WHERE l.credential = $3 AND l.expires_at > now()) + 32)) AS s(slot)
            WHERE NOT EXISTS (SELECT 1 FROM event_stream_slots e WHERE e.credential = $3 AND e.slot = s.slot AND e.expires_at > now())
            ORDER BY random()
            LIMIT 1
          ), credential_taken AS (
            -- Only with the organization's slot: a credential slot alone is never held.
            INSERT INTO event_stream_slots AS e (credential, slot, holder, node_id, expires_at)
            SELECT $3, slot, $5, $6, now() + make_interval(secs => $7) FROM credential_free
            WHERE EXISTS (SELECT 1 FROM organization_taken)
            ON CONFLICT (credential, slot) DO UPDATE SET holder = EXCLUDED.holder, node_id = EXCLUDED.node_id, expires_at = EXCLUDED.expires_at
              WHERE e.expires_at <= now()
            RETURNING slot
          )
          SELECT (SELECT slot FROM organization_taken) AS organization_slot,
                 EXISTS (SELECT 1 FROM organization_free) AS organization_free,
                 (SELECT slot FROM credential_taken) AS credential_slot,
                 EXISTS (SELECT 1 FROM credential_free) AS credential_free`,
        values: [ask.organization, ask.organizationCap, ask.credential, ask.credentialCap, ask.holder, this.config.nodeId, ask.holdSeconds],
      }))!;
      if (row.organization_slot === null) {
        // No free slot at all (as opposed to a lost race): refuse without looking again.
        if (!row.organization_free) return { refused: 'organization' };
        lost = 'organization';
        continue;
      }
      if (row.credential_slot !== null) return { refused: null, organizationSlot: row.organization_slot, credentialSlot: row.credential_slot };
      await this.releases.release([{ credential: ask.organization, slot: row.organization_slot }], ask.holder);
      if (!row.credential_free) return { refused: 'credential' };
      lost = 'credential';
    }
    return { refused: lost };
  }
}

interface SlotRequest {
  readonly organization: string;
  readonly organizationCap: number;
  readonly credential: string;
  readonly credentialCap: number;
  readonly holder: string;
  readonly holdSeconds: number;
}

/** Both slots, or which cap refused. */
type TakenSlots = { readonly refused: null; readonly organizationSlot: number; readonly credentialSlot: number } | { readonly refused: 'organization' | 'credential' };
