import type { ExecutionId } from '@openbot/domain';
import type { EngineContext } from './context';
import { sealData } from './execution-data';
import type { Queryable } from './ports';
import { enqueueAdvance } from './queue';
import { insertExecution, type ExecutionRow } from './store';
import type { Json, ResourceRef } from './workflow';

export interface NewExecutionCommand {
  readonly workflow: string;
  readonly input: Json;
  readonly scope: { readonly kind: 'member' | 'service'; readonly id: string; readonly organizationId: string | null };
  readonly resource?: ResourceRef;
}

/**
 * The row of a new execution. Owned: running on this node at generation 1 with its lease.
 * Unowned: `queued`, no lease; it runs once an advance job for it exists (a held execution
 * gets that job only when it is admitted).
 */
export function newExecutionRow(
  ctx: EngineContext,
  id: ExecutionId,
  command: NewExecutionCommand,
  owned: boolean,
  sealed: { readonly keyId: string; readonly data: Buffer } = sealInitial(ctx, id, command),
): ExecutionRow {
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
    last_seq: 0,
    key_id: sealed.keyId,
    data: sealed.data,
    error_id: null,
    category: null,
  };
}

/** The sealed first state of a new execution, from its workflow's `initial`. */
export function sealInitial(ctx: EngineContext, id: ExecutionId, command: NewExecutionCommand): { keyId: string; data: Buffer } {
  const workflow = ctx.workflows.get(command.workflow);
  if (!workflow) throw new Error(`no workflow named "${command.workflow}" is registered`);
  return sealData(ctx.sealed, id, { state: workflow.initial(command.input), wake: null, wait: null });
}

/** Inserts an unowned queued execution; with `runnable` its advance job commits with it. */
export async function insertQueued(ctx: EngineContext, tx: Queryable, id: ExecutionId, command: NewExecutionCommand, runnable: boolean): Promise<void> {
  await insertExecution(tx, newExecutionRow(ctx, id, command, false), null);
  if (runnable) await enqueueAdvance(ctx.boss, tx, id);
}
