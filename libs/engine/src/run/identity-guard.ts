import { Forbidden } from '@openbot/domain';
import type { EngineContext } from './context';
import { aad, type SealedJson } from '../base/sealed-json';
import { retryStorage } from '../base/storage-retry';
import type { Json, Workflow } from '../authoring/workflow';

/**
 * The engine's part of identity and access (IDN-01, IDN-06, IDN-11): it stores each execution's
 * identity sealed, asks the product's IdentityCheck on restore and before outside sends, and
 * refuses a command whose scope kind is not the workflow's audience. It never reads the
 * identity itself: its shape belongs to the product (`ExecutionIdentity` in the domain).
 */

/** An execution's identity as stored: sealed for its own row (SEC-01), never in clear. */
export interface SealedIdentity {
  readonly keyId: string;
  readonly data: Buffer;
}

/** The identity of the work is no longer valid: the execution stops with category `forbidden` (IDN-06). */
export class IdentityInvalid extends Error {
  constructor(readonly reason: string) {
    super(`the execution's identity is no longer valid: ${reason}`);
  }
}

export function sealIdentity(sealed: SealedJson, executionId: string, identity: Json): SealedIdentity {
  return sealed.seal(identity, aad.identity(executionId));
}

export function openIdentity(sealed: SealedJson, executionId: string, envelope: SealedIdentity): Json {
  return sealed.open(envelope.keyId, envelope.data, aad.identity(executionId));
}

/** The sealed identity of a row, when it has one. */
export function identityOf(row: { identity_key_id?: string | null; identity?: Buffer | null }): SealedIdentity | null {
  return row.identity_key_id != null && row.identity != null ? { keyId: row.identity_key_id, data: row.identity } : null;
}

/**
 * The sealed identity of a child of `parentId` (or of work that continues it): the product's
 * `derive` narrows it if it has one (IDN-02), else it is the parent's, sealed for the new row.
 */
export function childIdentityOf(ctx: EngineContext, parentId: string, parent: SealedIdentity | null, childId: string, hint: Json | null = null): SealedIdentity | null {
  if (parent === null) return null;
  const opened = openIdentity(ctx.sealed, parentId, parent);
  const derived = ctx.identityCheck?.derive ? ctx.identityCheck.derive(opened, parentId, hint) : opened;
  return sealIdentity(ctx.sealed, childId, derived);
}

/**
 * A workflow declares who may submit it (IDN-11): a service cannot enter a member workflow, and a
 * member (or a member's token) cannot send through a service workflow. A workflow that declares
 * no audience takes both (engine-level and test workflows).
 */
export function assertAudience(workflow: Pick<Workflow, 'name' | 'audience'>, scopeKind: string): void {
  if (workflow.audience === undefined || workflow.audience === scopeKind) return;
  throw new Forbidden(
    workflow.audience === 'member'
      ? `A service cannot enter the member workflow ${workflow.name}.`
      : `A member cannot send through the service workflow ${workflow.name}.`,
  );
}

/**
 * Asks whether the run's identity is still valid, now (IDN-06); answers why not, or null. A
 * stored identity that cannot be opened is invalid too: work never continues on a guess.
 */
export async function identityFailure(
  ctx: EngineContext,
  run: { readonly id: string; readonly identity: SealedIdentity | null },
): Promise<string | null> {
  const check = ctx.identityCheck;
  if (check === undefined || run.identity === null) return null;
  let identity: Json;
  try {
    identity = openIdentity(ctx.sealed, run.id, run.identity);
  } catch {
    return 'the stored identity cannot be read';
  }
  const verdict = await retryStorage(() => check.check(identity, run.id), undefined);
  return verdict === 'valid' ? null : verdict.invalid;
}
