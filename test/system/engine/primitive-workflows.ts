import type { Json, Workflow } from '@openbot/engine';

/**
 * Workflows of the engine-primitive crash tests (engine-node.ts registers them next to `rel.steps`):
 * - `rel.inbox`: one phase that waits in its inbox for a `steer` signal while it runs, asks for the
 *   cancel of `cancel` (if any) as a command of its checkpoint (STC-01), and ends with what it read;
 * - `rel.await`: waits for the end of `targets` (not its children), then ends with their final states.
 */

interface InboxState {
  [key: string]: Json;
  cancel: string | null;
  read: Json[] | null;
}

export const inboxWorkflow: Workflow<InboxState, { cancel?: string | null }> = {
  name: 'rel.inbox',
  initial: (input) => ({ cancel: input.cancel ?? null, read: null }),
  next: (s) => (s.read === null ? { phase: 'listen' } : { end: 'completed', result: { read: s.read } }),
  phases: {
    listen: {
      async run(ctx) {
        const read = await ctx.inbox.next(['steer']);
        if (ctx.state.cancel !== null) ctx.commands.cancel(ctx.state.cancel);
        return { state: { ...ctx.state, read: read.map((s) => s.payload) } };
      },
    },
  },
};

interface AwaitState {
  [key: string]: Json;
  targets: string[];
  ended: Json[] | null;
  waited: boolean;
}

export const awaitWorkflow: Workflow<AwaitState, { targets: string[] }> = {
  name: 'rel.await',
  initial: (input) => ({ targets: input.targets, ended: null, waited: false }),
  next: (s) => (!s.waited ? { phase: 'await' } : s.ended === null ? { phase: 'record' } : { end: 'completed', result: { ended: s.ended } }),
  phases: {
    await: { run: async (ctx) => ({ state: { ...ctx.state, waited: true }, wait: { executions: ctx.state.targets } }) },
    record: {
      run: async (ctx) => ({
        state: { ...ctx.state, ended: (ctx.wake?.executions ?? []).map((e) => ({ executionId: e.executionId, state: e.state })) },
      }),
    },
  },
};
