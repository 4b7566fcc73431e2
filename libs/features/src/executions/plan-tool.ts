import type { ToolCall } from '@openbot/core';
import type { ToolAnswer } from '../../../platform/src/turn-core/tool-answer';
import { PLAN_STEP_STATUSES } from '../../../platform/src/turn-core/tool-spec';
import type { TurnPhaseContext } from '../../../platform/src/turn-core/turn-contract';
import { routeIssues, type TurnTool } from '../../../platform/src/turn-core/turn-tool';
import type { TurnPlan } from '../../../platform/src/turn-core/turn-state';

/**
 * The built-in `update_plan` tool (decision 025): the model's plan replaces the Turn's, is saved
 * with the Turn's state and with its row for `GET /v1/executions/{id}/plan` in the phase's
 * checkpoint, and is streamed as `plan.updated { steps }`. Arguments that do not fit are an
 * error result the model can read, and change nothing.
 */
export function updatePlan(context: TurnPhaseContext, call: ToolCall, step: number): { plan: TurnPlan | null; answer: ToolAnswer } {
  const steps = parseSteps(call.arguments);
  if (steps === null) {
    return {
      plan: null,
      answer: { modelOutput: `Error: "${call.name}" needs { "steps": [{ "title": "…", "status": "${PLAN_STEP_STATUSES.join('" | "')}" }] }.`, isError: true },
    };
  }
  const plan: TurnPlan = { steps, updatedAt: context.clock.now() };
  context.commands.write(
    `INSERT INTO execution_plans (execution_id, steps, updated_at) VALUES ($1, $2::jsonb, $3)
     ON CONFLICT (execution_id) DO UPDATE SET steps = EXCLUDED.steps, updated_at = EXCLUDED.updated_at`,
    [context.executionId, JSON.stringify(steps), new Date(plan.updatedAt)],
  );
  context.publisher.publish('plan.updated', { steps: steps.map((s) => ({ title: s.title, status: s.status })) }, { step });
  return { plan, answer: { modelOutput: 'The plan is saved.', isError: false } };
}

function parseSteps(raw: string): TurnPlan['steps'] | null {
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch {
    return null;
  }
  const steps = (args as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps) || steps.length > 100) return null;
  const parsed: Array<TurnPlan['steps'][number]> = [];
  for (const item of steps) {
    const { title, status } = (item ?? {}) as { title?: unknown; status?: unknown };
    if (typeof title !== 'string' || title.length > 500 || !(PLAN_STEP_STATUSES as readonly unknown[]).includes(status)) return null;
    parsed.push({ title, status: status as TurnPlan['steps'][number]['status'] });
  }
  return parsed;
}

/** The `plan` tool kind (decision 078): the built-in `update_plan`, answered inside the Turn's checkpoint. */
export const planTool: TurnTool = {
  kind: 'plan',
  answers: 'turn',
  needsChild: false,
  validate: (tool, index) => routeIssues(tool, index, 'a plan tool'),
  answer: ({ call, phase, context, called }) => {
    called();
    const updated = updatePlan(phase, call, context.step);
    return Promise.resolve(updated.plan === null ? { answer: updated.answer } : { answer: updated.answer, plan: updated.plan });
  },
};
