import { codec, defineWorkflow } from '@openbot/engine';
import type { ObjectStore } from '../../../../platform/src/object-store/object-store';

export const FILE_DELETE = defineWorkflow({
  name: 'file.delete',
  audience: 'member',
  input: codec.object({ fileId: codec.string, objectKey: codec.string }),
  state: codec.object({ fileId: codec.string, objectKey: codec.string, removed: codec.boolean }),
  calls: { 'object.delete': codec.object({ deleted: codec.string }) },
});

/**
 * Removes a deleted file's bytes from the object store (FW-08). The metadata row went in the
 * transaction that submitted this execution, so from then on only the bytes are left, and this
 * execution owns them: a crash at any point is recovered by the engine (a takeover repeats the
 * delete, which is safe: deleting an absent object succeeds). Failures are retried with backoff.
 */
export function fileDeleteWorkflow(deps: { readonly store: ObjectStore }) {
  return FILE_DELETE.implement({
    initial: (input) => ({ ...input, removed: false }),
    next: (state) => (state.removed ? { end: 'completed' } : { phase: 'remove' }),
    phases: {
      remove: {
        retries: 8,
        async run(context) {
          const { objectKey } = context.state;
          await context.call('object.delete', { safe: true, kind: 'other', attempts: 5 }, async () => {
            await deps.store.delete(objectKey);
            return { deleted: objectKey };
          });
          return { state: { ...context.state, removed: true } };
        },
      },
    },
  });
}
