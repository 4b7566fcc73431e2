import { isFinal, newId, type ExecutionId, type ExecutionState } from '@openbot/domain';
import type { EngineContext } from './context';
import { openIdentity, identityOf } from './identity-guard';
import { insertQueued } from './new-execution';
import { announceEvents, SIGNALS_CHANNEL } from '../logs/node-listener';
import type { Queryable } from '../base/ports';
import { enqueueAdvance } from '../base/queue';
import { aad } from '../base/sealed-json';
import { selectExecution, selectIdentity } from '../sql/executions';
import { pauseLocked } from './pause-events';
import type { ExecutionCommands, Json, SubmittedWork } from '../authoring/workflow';
import * as signalSql from '../sql/signals';
import { runStatement, type Statement } from '../sql/statement';

/**
 * Commands to other executions inside a caller's transaction (STC-01): `Engine.signal` and
 * `Engine.cancel` use them in a transaction of their own, a phase's checkpoint and an end in
 * theirs. What must happen after the commit (run a woken execution here, tell a running one's
 * owner) is collected in an `AfterCommit` and done only once the transaction committed.
 */

/** Work to do after a commit: claim woken executions here; notify the owners of running ones. */
export class AfterCommit {
  readonly advance: string[] = [];
  readonly notify: string[] = [];
  /** Executions other than the committing one whose event logs it appended to (a pause's `execution.paused`). */
  readonly announce: string[] = [];

  clear(): void {
    this.advance.length = 0;
    this.notify.length = 0;
    this.announce.length = 0;
  }

  run(ctx: EngineContext): void {
    for (const id of this.notify) ctx.notifier.notify(SIGNALS_CHANNEL, id);
    for (const id of this.announce) announceEvents(ctx, id);
    for (const id of this.advance) ctx.advanceHere(id);
  }
}

/**
 * Stores a signal and wakes its execution if it waits (no lost wake-up: a signal saved before the
 * waiter saved its waiting state is found by the waiter's own check under the same row lock).
 * Answers null when the execution does not exist or has ended; 'woken' when it was queued;
 * 'stored' when it runs (its owner reads it from the phase inbox or its next wait).
 */
export async function signalIn(ctx: EngineContext, tx: Queryable, executionId: string, name: string, payload: Json): Promise<'woken' | 'stored' | null> {
  if (name === 'cancel') throw new Error('use cancel() to cancel');
  const row = await selectExecution(tx, executionId, true);
  if (!row || isFinal(row.state)) return null;
  const signalId = newId();
  const sealed = ctx.sealed.seal(payload, aad.signal(signalId));
  await tx.query({
    ...signalSql.insertSignal,
    values: [signalId, executionId, name, sealed.keyId, sealed.data],
  });
  if (row.state === 'waiting' && !row.paused) {
    await tx.query({ ...signalSql.wake, values: [executionId] });
    await enqueueAdvance(ctx.boss, tx, executionId);
    return 'woken';
  }
  return 'stored';
}

/**
 * A cancel request (EXE-12, EXE-15): enters `cancelling` with a new cancel phase and a stored
 * signal. `wake`: nobody runs it, so it needs a claim (its job is enqueued here).
 */
export async function cancelIn(ctx: EngineContext, tx: Queryable, executionId: string): Promise<{ state: ExecutionState; wake: boolean } | null> {
  const row = await selectExecution(tx, executionId, true);
  if (!row) return null;
  if (isFinal(row.state)) return { state: row.state, wake: false };
  const { rows } = await tx.query<{ cancel_phase: number }>({
    ...signalSql.requestCancel,
    values: [executionId],
  });
  await tx.query({
    ...signalSql.insertCancelSignal,
    values: [executionId, rows[0]!.cancel_phase],
  });
  const idle = row.state !== 'running' && row.state !== 'cancelling';
  if (idle || !row.leased) await enqueueAdvance(ctx.boss, tx, executionId);
  return { state: 'cancelling', wake: idle || !row.leased };
}

/** A command a phase issued, applied in its checkpoint's transaction. */
export type OutgoingCommand =
  | { readonly kind: 'signal'; readonly executionId: string; readonly name: string; readonly payload: Json }
  | { readonly kind: 'cancel'; readonly executionId: string }
  | { readonly kind: 'submit'; readonly executionId: ExecutionId; readonly command: SubmittedWork }
  | { readonly kind: 'write'; readonly sql: string | Statement; readonly params: readonly unknown[] }
  | { readonly kind: 'pause'; readonly executionId: string };

/** The phase's `commands`: collects what it asks for; nothing happens before the checkpoint. */
export function collectCommands(into: OutgoingCommand[]): ExecutionCommands {
  return {
    signal: (executionId, name, payload) => {
      if (name === 'cancel') throw new Error('use cancel() to cancel');
      into.push({ kind: 'signal', executionId, name, payload: payload ?? null });
    },
    cancel: (executionId) => void into.push({ kind: 'cancel', executionId }),
    submit: (command) => {
      const executionId = newId<ExecutionId>();
      into.push({ kind: 'submit', executionId, command });
      return executionId;
    },
    write: (sql, params) => void into.push({ kind: 'write', sql, params: params ?? [] }),
    pause: (executionId) => void into.push({ kind: 'pause', executionId }),
  };
}

/** Applies a phase's commands in its checkpoint transaction, in the order they were issued. */
export async function applyCommands(ctx: EngineContext, tx: Queryable, fromId: string, commands: readonly OutgoingCommand[], after: AfterCommit): Promise<void> {
  for (const command of commands) {
    if (command.kind === 'signal') {
      const sent = await signalIn(ctx, tx, command.executionId, command.name, command.payload);
      if (sent === 'woken') after.advance.push(command.executionId);
      else if (sent === 'stored') after.notify.push(command.executionId);
    } else if (command.kind === 'cancel') {
      const requested = await cancelIn(ctx, tx, command.executionId);
      if (requested?.state === 'cancelling') after.notify.push(command.executionId);
      if (requested?.wake === true) after.advance.push(command.executionId);
    } else if (command.kind === 'write') {
      await runStatement(tx, command.sql, [...command.params]);
    } else if (command.kind === 'pause') {
      const row = await selectExecution(tx, command.executionId, true);
      if (row && !isFinal(row.state) && row.state !== 'cancelling' && !row.paused) {
        await pauseLocked(ctx, tx, command.executionId);
        if (command.executionId !== fromId) after.announce.push(command.executionId);
      }
    } else {
      // Work submitted by a phase acts with the phase's identity unless told otherwise (IDN-01).
      const identity = command.command.identity ?? (await identityToContinue(ctx, tx, fromId));
      await insertQueued(ctx, tx, command.executionId, { ...command.command, identity }, true);
      after.advance.push(command.executionId);
    }
  }
}

/** The opened identity of an execution, or null when it has none. */
export async function identityToContinue(ctx: EngineContext, tx: Queryable, executionId: string): Promise<Json | null> {
  const row = await selectIdentity(tx, executionId);
  const sealed = row ? identityOf(row) : null;
  return sealed === null ? null : openIdentity(ctx.sealed, executionId, sealed);
}

/** What a phase hands its checkpoint besides its state: commands to others, and the signals it read. */
export interface PhaseOutbox {
  readonly commands: readonly OutgoingCommand[];
  /** Inbox signal IDs the phase read: consumed in the checkpoint's transaction. */
  readonly consumed: readonly string[];
}

export const NO_OUTBOX: PhaseOutbox = { commands: [], consumed: [] };

export function isEmptyOutbox(outbox: PhaseOutbox): boolean {
  return outbox.commands.length === 0 && outbox.consumed.length === 0;
}
