import type { EngineContext } from './context';
import { identityFailure, IdentityInvalid } from './identity-guard';
import type { LocalRun } from './local-run';

/** Checks the identity before an outside send; an invalid one refuses the send and fails the run (IDN-06). */
export async function checkBeforeSend(ctx: EngineContext, run: LocalRun): Promise<void> {
  const invalid = await identityFailure(ctx, run);
  if (invalid === null) return;
  run.identityInvalid ??= invalid;
  throw new IdentityInvalid(invalid);
}

/** How a run whose identity is no longer valid ends: category `forbidden`. */
export function forbidden(reason: string): { category: 'forbidden'; cause: IdentityInvalid } {
  return { category: 'forbidden', cause: new IdentityInvalid(reason) };
}
