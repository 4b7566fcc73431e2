import { Injectable } from '@nestjs/common';
import type { EndTransaction, EngineInTransaction } from '@openbot/engine';

/**
 * How a cleanup command is submitted with the caller's rows: `engine.in(tx)` in a command
 * handler or a call's commit, or `{ submit: context.submit }` in an execution's end. Either
 * starts it once that transaction committed.
 */
export type CleanupSubmitter = Pick<EngineInTransaction, 'submit'>;

/**
 * Hands the OAuth grant of a connection or a developer test (`holderId`) to cleanup in the
 * caller's transaction (GRANT-03, GRANT-05): App OAuth's handOverGrant (app-oauth/grant-cleanup-command.ts).
 */
export type GrantHandover = (
  tx: EndTransaction,
  submit: CleanupSubmitter,
  holderId: string,
  kind: 'replaced' | 'removed',
  sourceExecutionId?: string | null,
) => Promise<void>;

/**
 * The port apps owns for the OAuth grants of what it deletes: a connection at its cleanup's end,
 * an App's developer tests. App OAuth sits above apps (it imports apps, never the reverse) and
 * fills this port once at start (AppOAuthModule), as it fills AppClient's ConnectionAuthorization.
 */
@Injectable()
export class ConnectionGrants {
  private handover: GrantHandover | null = null;

  /** Set once by the App OAuth module. */
  useHandover(handover: GrantHandover): void {
    this.handover = handover;
  }

  /** Hands a holder's grant to cleanup; throws when App OAuth registered nothing, so a grant is never silently left behind. */
  handOver(...args: Parameters<GrantHandover>): ReturnType<GrantHandover> {
    if (this.handover === null) throw new Error('App OAuth has not registered its grant handover (AppOAuthModule)');
    return this.handover(...args);
  }
}
