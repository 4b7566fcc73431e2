import type { ExecutionId } from '@openbot/domain';
import type { EngineContext } from './context';
import { initialData, sealData } from './execution-data';
import { assertAudience, sealIdentity } from './identity-guard';
import type { Queryable } from '../base/ports';
import { buildAdvanceJob } from '../base/queue';
import type { ExecutionRow, NewExecution } from '../base/store';
import { insertExecution, insertExecutionWithJob } from '../sql/executions';
import type { NewExecutionCommand } from '../authoring/engine-api';
import type { Json, Workflow } from '../authoring/workflow';

export type { NewExecutionCommand };

/**
 * The row of a new execution. Owned: running on this node at generation 1 with its lease.
 * Unowned: `queued`, no lease; it runs once an advance job for it exists (a held execution
 * gets that job only when it is admitted). Refuses a scope the workflow does not admit (IDN-11).
 */
export function newExecutionRow(
  ctx: EngineContext,
  id: ExecutionId,
  command: NewExecutionCommand,
  owned: boolean,
  sealed?: { readonly keyId: string; readonly data: Buffer },
): ExecutionRow & NewExecution {
  const workflow = registered(ctx, command.workflow);
  assertAudience(workflow, command.scope.kind);
  const data = sealed ?? sealData(ctx.sealed, id, initialData(workflow.initial(command.input)));
  const identity = command.identity === undefined || command.identity === null ? null : sealIdentity(ctx.sealed, id, command.identity);
  return {
    id,
    workflow: command.workflow,
    organization_id: command.scope.organizationId,
    scope_kind: command.scope.kind,
    scope_id: command.scope.id,
    resource_type: command.resource?.type ?? null,
    resource_id: command.resource?.id ?? null,
    parent_id: null,
    attached: true,
    state: owned ? 'running' : 'queued',
    step: 0,
    generation: 1,
    owner_node: owned ? ctx.nodeId : null,
    leased: owned,
    cancel_phase: 0,
    paused: false,
    key_id: data.keyId,
    data: data.data,
    error_id: null,
    category: null,
    identity_key_id: identity?.keyId ?? null,
    identity: identity?.data ?? null,
  };
}

function registered(ctx: EngineContext, name: string): Workflow<Json, Json> {
  const workflow = ctx.workflows.get(name);
  if (!workflow) throw new Error(`no workflow named "${name}" is registered`);
  return workflow;
}

/** Inserts an unowned queued execution; with `runnable` its advance job commits with it. */
export async function insertQueued(ctx: EngineContext, tx: Queryable, id: ExecutionId, command: NewExecutionCommand, runnable: boolean): Promise<void> {
  const row = newExecutionRow(ctx, id, command, false);
  if (runnable) await insertExecutionWithJob(tx, row, null, await buildAdvanceJob(ctx.boss, id, 0));
  else await insertExecution(tx, row, null);
}
