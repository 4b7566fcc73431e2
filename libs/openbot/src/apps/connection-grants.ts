import { Injectable } from '@nestjs/common';
import type { EndTransaction, Engine, NewExecutionCommand, Queryable } from '@openbot/engine';

/** How a cleanup command is submitted: in a transaction through the engine, or with an execution's end. */
export type CleanupSubmitter = (command: NewExecutionCommand, held: boolean) => Promise<{ readonly executionId: string; readonly start: () => void }>;

/** The submitter of a command handler or a call's commit: the engine, in that transaction. */
export function submitterIn(tx: Queryable, engine: Engine): CleanupSubmitter {
  return (command, held) => engine.submitIn(tx, command, { held });
}

/**
 * Hands the OAuth grant of a connection or a developer test (`holderId`) to cleanup in the
 * caller's transaction (GRANT-03, GRANT-05): App OAuth's handOverGrant (app-oauth/grant-cleanup-command.ts).
 * Answers null when the holder has no grant.
 */
export type GrantHandover = (
  tx: EndTransaction,
  submit: CleanupSubmitter,
  holderId: string,
  kind: 'replaced' | 'removed',
  sourceExecutionId?: string | null,
) => Promise<{ start: () => void } | null>;

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
