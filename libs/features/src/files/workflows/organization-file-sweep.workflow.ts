import { codec, defineWorkflow } from '@openbot/engine';
import type { ObjectStore } from '../../../../platform/src/object-store/object-store';

/** Objects listed and deleted per step. */
const SWEEP_PAGE = 500;

export const ORGANIZATION_FILE_SWEEP = defineWorkflow({
  name: 'files.organization-sweep',
  // Platform work for an organization that is gone: no member to act as.
  audience: 'service',
  input: codec.object({ organizationId: codec.string }),
  state: codec.object({ organizationId: codec.string, removed: codec.number, done: codec.boolean }),
  calls: { 'objects.sweep': codec.object({ removed: codec.number }) },
});

/** Where an organization's file objects live: every upload writes `files/<organizationId>/<fileId>`. */
export function organizationFilePrefix(organizationId: string): string {
  return `files/${organizationId}/`;
}

/**
 * Removes every object of a deleted organization from the object store (FW-08, decision 036):
 * page by page, each page one safe call in the call log (list, then delete each key; deleting an
 * absent object succeeds), retried with backoff and taken over after a crash like any execution,
 * until a page comes back short. It lists the store itself, not the metadata (that went with the
 * organization), so no object is left behind: also not one of an upload that never committed.
 */
export function organizationFileSweepWorkflow(deps: { readonly store: ObjectStore }) {
  return ORGANIZATION_FILE_SWEEP.implement({
    initial: (input) => ({ organizationId: input.organizationId, removed: 0, done: false }),
    next: (state) => (state.done ? { end: 'completed' } : { phase: 'sweep' }),
    phases: {
      sweep: {
        retries: 8,
        async run(context) {
          const page = await context.call('objects.sweep', { safe: true, kind: 'other', attempts: 5 }, async () => {
            const keys = await deps.store.list(organizationFilePrefix(context.state.organizationId), SWEEP_PAGE);
            for (const key of keys) await deps.store.delete(key);
            return { removed: keys.length };
          });
          return { state: { ...context.state, removed: context.state.removed + page.removed, done: page.removed < SWEEP_PAGE } };
        },
      },
    },
  });
}
