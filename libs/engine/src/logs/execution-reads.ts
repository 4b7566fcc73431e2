import type { ExecutionState } from '@openbot/domain';
import type { ResourceRef } from '../base/json';
import type { Queryable } from '../base/ports';
import * as callSql from '../sql/calls';
import * as childSql from '../sql/children';
import * as executionSql from '../sql/executions';

/** What a feature may know of an execution: no data, no identity, no lease internals. */
export interface ExecutionFacts {
  readonly id: string;
  /** The workflow's name (its kind). */
  readonly kind: string;
  readonly state: ExecutionState;
  readonly generation: number;
  readonly organizationId: string | null;
  /** Who the work acts for (IDN-10): a member or a service. */
  readonly scope: { readonly kind: string; readonly id: string };
  readonly resource: ResourceRef | null;
  readonly parentId: string | null;
  /** A child its parent waits for and cancels with itself (EXE-13); false for detached and root work. */
  readonly attached: boolean;
  /** Paused (TASK-02): a flag on a waiting execution, not a state of its own. */
  readonly paused: boolean;
  readonly errorId: string | null;
  readonly category: string | null;
}

/** The states the stuck-work view lists: work that waits on something outside itself. */
export const UNSETTLED_STATES = ['waiting', 'outcome_unknown', 'cancelling'] as const;
export type UnsettledState = (typeof UNSETTLED_STATES)[number];

/** An execution in the stuck-work view: its facts, who owns it, and how old its last change is. */
export interface UnsettledExecution extends ExecutionFacts {
  readonly ownerNode: string | null;
  /** When the owner's lease runs out (null: no lease, nobody runs it now). */
  readonly leaseUntil: Date | null;
  /** The lease is live now (the database's clock). */
  readonly leased: boolean;
  /** The last change of its row: it has been in this state at least since then. */
  readonly since: Date;
}

interface FactsRow {
  id: string;
  workflow: string;
  state: ExecutionState;
  generation: number;
  organization_id: string | null;
  scope_kind: string;
  scope_id: string;
  resource_type: string | null;
  resource_id: string | null;
  parent_id: string | null;
  attached: boolean;
  paused: boolean;
  error_id: string | null;
  category: string | null;
}

function toFacts(row: FactsRow): ExecutionFacts {
  return {
    id: row.id,
    kind: row.workflow,
    state: row.state,
    generation: row.generation,
    organizationId: row.organization_id,
    scope: { kind: row.scope_kind, id: row.scope_id },
    resource: row.resource_type !== null && row.resource_id !== null ? { type: row.resource_type, id: row.resource_id } : null,
    parentId: row.parent_id,
    attached: row.parent_id !== null && row.attached,
    paused: row.paused,
    errorId: row.error_id,
    category: row.category,
  };
}

/**
 * The engine's read API for features (issue 12): execution state, generation, kind, resource and
 * children, on the caller's connection (the pool, or its own transaction). Feature SQL never
 * names the engine's `executions` table; the engine may change it behind these reads.
 */
export const executionReads = {
  /**
   * One execution, or null. With `organizationId`, only an execution of that organization: the
   * access rule sits in the statement (IDN-08), so a foreign ID reads as unknown.
   */
  async byId(db: Queryable, executionId: string, options: { readonly organizationId?: string } = {}): Promise<ExecutionFacts | null> {
    const organization = options.organizationId !== undefined;
    const { rows } = await db.query<FactsRow>(
      organization
        ? { ...executionSql.factsInOrganization, values: [executionId, options.organizationId] }
        : { ...executionSql.facts, values: [executionId] },
    );
    return rows[0] === undefined ? null : toFacts(rows[0]);
  },

  /**
   * Executions unsettled (`waiting`, `outcome_unknown`, `cancelling`) for at least
   * `olderThanSeconds`, oldest change first, one page after the execution `after` (the last
   * row of the previous page). For operators: it spans every organization.
   */
  async unsettled(
    db: Queryable,
    options: { readonly olderThanSeconds: number; readonly states: readonly UnsettledState[]; readonly limit: number; readonly after: string | null },
  ): Promise<UnsettledExecution[]> {
    const { rows } = await db.query<FactsRow & { owner_node: string | null; lease_until: Date | null; leased: boolean; updated_at: Date }>({
      ...executionSql.unsettled,
      values: [options.olderThanSeconds, options.states, options.after, options.limit],
    });
    return rows.map((row) => ({ ...toFacts(row), ownerNode: row.owner_node, leaseUntil: row.lease_until, leased: row.leased, since: row.updated_at }));
  },

  /** The execution and every execution under it (children, their children…), attached or not. */
  async subtree(db: Queryable, executionId: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>({ ...childSql.subtreeIds, values: [executionId] });
    return rows.map((row) => row.id);
  },

  /** The executions above it, its parent first, the root last. */
  async ancestors(db: Queryable, executionId: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>({ ...childSql.ancestorIds, values: [executionId] });
    return rows.map((row) => row.id);
  },

  /** The IDs of an execution's call log entries (every call and attempt), as features record them with what a call produced. */
  async callIds(db: Queryable, executionId: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>({ ...callSql.callIdsOfExecution, values: [executionId] });
    return rows.map((row) => row.id);
  },

  /** The children an execution started, oldest first. */
  async children(db: Queryable, parentId: string): Promise<ExecutionFacts[]> {
    const { rows } = await db.query<FactsRow>({
      ...childSql.childrenFacts,
      values: [parentId],
    });
    return rows.map(toFacts);
  },
};
