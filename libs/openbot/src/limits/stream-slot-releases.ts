import { Inject, Injectable } from '@nestjs/common';
import { GroupWriter } from '@openbot/engine';
import { Database } from '../database/sql';

/** Most slots one statement frees. */
const MAX_BATCH = 500;

interface Release {
  readonly credential: string;
  readonly slot: number;
  readonly holder: string;
  readonly done: () => void;
}

/**
 * Frees the per-credential stream slots of ended streams (decision 058). The first release is
 * written at once; those that arrive while a statement is in flight go together in the next one.
 * When many streams end at once (every reader of a hundred Turns that end together), that is a
 * handful of statements instead of one pooled connection per stream, taken from the Turns' own
 * end transactions. A slot is freed only by its holder; a failed delete frees it at its expiry.
 */
@Injectable()
export class StreamSlotReleases {
  private readonly writer: GroupWriter<Release>;

  constructor(@Inject(Database) private readonly db: Database) {
    const free = (batch: Release[]): Promise<void> =>
      this.db.pool
        .query({
          name: 'limits.release_stream_slots',
          text: `DELETE FROM event_stream_slots e
                  USING unnest($1::text[], $2::int[], $3::uuid[]) AS r(credential, slot, holder)
                  WHERE e.credential = r.credential AND e.slot = r.slot AND e.holder = r.holder`,
          values: [batch.map((r) => r.credential), batch.map((r) => r.slot), batch.map((r) => r.holder)],
        })
        .catch(() => undefined)
        .then(() => {
          for (const release of batch) release.done();
        });
    // Never throws: a failed delete frees its slots at their expiry.
    this.writer = new GroupWriter<Release>(MAX_BATCH, { one: (release) => free([release]), many: free, fail: (release) => release.done() });
  }

  /** Resolves once the slot's row is gone (or the delete failed); never throws. */
  release(credential: string, slot: number, holder: string): Promise<void> {
    return new Promise((done) => this.writer.add({ credential, slot, holder, done }));
  }
}
