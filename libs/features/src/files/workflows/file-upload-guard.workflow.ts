import { codec, defineWorkflow } from '@openbot/engine';
import type { Sql } from '../../../../platform/src/database/sql';
import type { ObjectStore } from '../../../../platform/src/object-store/object-store';

/** The signal an upload's commit (or its own cleanup) sends its guard. */
export const FILE_SETTLED_SIGNAL = 'file.settled';

/**
 * How long past an upload's deadline the guard waits before it removes the bytes: the upload's
 * commit refuses itself after the deadline by the database's clock, this margin covers a node
 * whose clock is somewhat behind (at most 30 s, at most the upload timeout itself).
 */
export function abandonTimeOf(deadline: Date, uploadTimeoutMs: number): Date {
  return new Date(deadline.getTime() + Math.min(30_000, uploadTimeoutMs));
}

export const FILE_UPLOAD_GUARD = defineWorkflow({
  name: 'file.upload-guard',
  audience: 'member',
  input: codec.object({ fileId: codec.string, objectKey: codec.string, abandonAt: codec.string }),
  state: codec.object({
    fileId: codec.string,
    objectKey: codec.string,
    abandonAt: codec.string,
    stage: codec.oneOf(['watching', 'removing', 'kept', 'removed'] as const),
  }),
  signals: { [FILE_SETTLED_SIGNAL]: codec.json },
  calls: { 'object.delete': codec.object({ deleted: codec.string }) },
});

/**
 * Watches one upload (decision 028): submitted with the `uploading` row, before the first byte
 * is written. The upload's commit marks the row `ready` and signals this execution, which then
 * ends. An upload that never commits (the node crashed between the object write and the
 * metadata commit, or the upload was cut off) leaves a row still `uploading` after its deadline:
 * the guard then removes the object and the row. The engine runs it wherever the lease lands,
 * so a dead node's orphans are removed by another node (recovery).
 */
export function fileUploadGuardWorkflow(deps: { readonly db: Sql; readonly store: ObjectStore }) {
  return FILE_UPLOAD_GUARD.implement({
    initial: (input) => ({ ...input, stage: 'watching' as const }),
    next: (state) => {
      if (state.stage === 'kept' || state.stage === 'removed') return { end: 'completed' };
      return { phase: state.stage === 'watching' ? 'watch' : 'remove' };
    },
    phases: {
      watch: {
        retries: 8,
        async run(context) {
          const state = context.state;
          const file = await deps.db.one<{ state: string }>({
            name: 'files.guard_state',
            text: 'SELECT state FROM files WHERE id = $1',
            values: [state.fileId],
          });
          if (file?.state === 'ready') return { state: { ...state, stage: 'kept' as const } };
          // No row: the upload failed and removed it; its bytes may still be there.
          if (file === undefined) return { state: { ...state, stage: 'removing' as const } };
          const abandonAt = new Date(state.abandonAt);
          if (context.clock.now() >= abandonAt.getTime()) return { state: { ...state, stage: 'removing' as const } };
          return { state: { ...state }, wait: { signals: [FILE_SETTLED_SIGNAL], until: abandonAt } };
        },
      },
      remove: {
        retries: 8,
        async run(context) {
          const { objectKey } = context.state;
          await context.call('object.delete', { safe: true, kind: 'other', attempts: 5 }, async () => {
            await deps.store.delete(objectKey);
            return { deleted: objectKey };
          });
          return { state: { ...context.state, stage: 'removed' as const } };
        },
      },
    },
    async end(context) {
      if (context.outcome !== 'completed' || context.state.stage !== 'removed') return;
      // Only a row that never became ready: a committed file is never removed by its guard.
      await context.tx.query(`DELETE FROM files WHERE id = $1 AND state = 'uploading'`, [context.state.fileId]);
    },
  });
}
