import { Inject, Injectable } from '@nestjs/common';
import { GroupWriter } from '@openbot/engine/node';
import { Database } from '../database/sql';

/** Most releases (each one stream's slots) one statement frees. */
const MAX_BATCH = 500;

/** One stream slot row: the organization's or a credential's (`organization:…`, `key:…`, `session:…`). */
export interface StreamSlot {
  readonly credential: string;
  readonly slot: number;
}

/** One entry: every slot one holder frees together (a stream's organization and credential slots). */
interface Release {
  readonly slots: readonly StreamSlot[];
  readonly holder: string;
  readonly done: () => void;
}

/**
 * Frees the stream slots of ended streams (decision 058): each release is one entry holding all
 * of a stream's slots (its organization's and its credential's), so they go in one DELETE. The first release is
 * written at once; those that arrive while a statement is in flight go together in the next one.
 * When many streams end at once (every reader of a hundred Turns that end together), that is a
 * handful of statements instead of one pooled connection per stream, taken from the Turns' own
 * end transactions. A slot is freed only by its holder; a failed delete frees it at its expiry.
 */
@Injectable()
export class StreamSlotReleases {
  private readonly writer: GroupWriter<Release>;

  constructor(@Inject(Database) private readonly db: Database) {
    const free = (batch: Release[]): Promise<void> => {
      const rows = batch.flatMap((release) => release.slots.map((slot) => ({ ...slot, holder: release.holder })));
      return this.db
        .count({
          name: 'limits.release_stream_slots',
          text: `DELETE FROM event_stream_slots e
                  USING unnest($1::text[], $2::int[], $3::uuid[]) AS r(credential, slot, holder)
                  WHERE e.credential = r.credential AND e.slot = r.slot AND e.holder = r.holder`,
          values: [rows.map((r) => r.credential), rows.map((r) => r.slot), rows.map((r) => r.holder)],
        })
        .catch(() => undefined)
        .then(() => {
          for (const release of batch) release.done();
        });
    };
    // Never throws: a failed delete frees its slots at their expiry.
    this.writer = new GroupWriter<Release>(MAX_BATCH, { one: (release) => free([release]), many: free, fail: (release) => release.done() });
  }

  /** Resolves once the slots' rows are gone, all in one statement (or the delete failed); never throws. */
  release(slots: readonly StreamSlot[], holder: string): Promise<void> {
    return new Promise((done) => this.writer.add({ slots, holder, done }));
  }
}
