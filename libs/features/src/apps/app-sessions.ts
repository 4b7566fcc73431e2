import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { newId, type ErrorId } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { toFailure, type McpConnection } from '@openbot/protocol';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../platform/src/config/runtime-config';
import { Database } from '../../../platform/src/database/sql';
import { SqlFailureRecorder } from '../../../platform/src/errors/sql-failure-recorder';
import type { SendActor } from '../../../platform/src/vaults/vault-secrets';
import { AppClient } from './app-client';

/** Which session a call may share: one connection, at one revision, for one actor's work (its Vault rights). */
export interface SessionKey {
  readonly connectionId: string;
  readonly revision: number;
  readonly actor: SendActor | null;
}

/** One use of an open session by a phase: released with the phase's resources (RES-01). */
export interface SessionUse {
  readonly scopeId: string;
  readonly connection: McpConnection;
  /** The session failed under a call (a lost answer, a dropped stream): no later call gets it; it closes once unused. */
  discard(): void;
  release(): Promise<void>;
}

interface Scope {
  readonly id: string;
  readonly key: string;
  readonly connectionId: string;
  readonly connection: McpConnection;
  sessionId: string | null;
  uses: number;
  /** No new use may take it: it is closed once its last use is released. */
  retired: boolean;
  closed: boolean;
  idleSince: number;
}

/**
 * The open MCP sessions of this node (RES-07): each is a physical scope, one row of
 * `app_connection_scopes` with this node, its session ID and its own lease. Later calls of the same
 * connection, revision and actor reuse an open session instead of opening one per call; a phase
 * holds a use of it as one of its resources and releases it when the phase closes (RES-01). The
 * node renews the leases of its open scopes; a scope whose connection is being deleted, whose
 * connection moved to another revision, or that stayed unused for `OPENBOT_APP_SESSION_IDLE_SECONDS`,
 * is closed (a legacy session with DELETE) and its close result stored on its row (RES-06). When
 * the lease cannot be renewed (the database is out of reach), every scope is closed locally; the
 * connection cleanup closes what is left once the lease ran out.
 */
@Injectable()
export class AppSessions implements BeforeApplicationShutdown {
  private readonly scopes = new Map<string, Scope>();
  private readonly opening = new Map<string, Promise<Scope>>();
  /** Scopes retired while in use, closed when their last use is released. */
  private readonly retiring = new Set<Scope>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly leaseSeconds: number;
  private readonly idleMs: number;

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(AppClient) private readonly client: AppClient,
    @Inject(Engine) private readonly engine: Engine,
    @Inject(RUNTIME_CONFIG) config: RuntimeConfig,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
  ) {
    this.leaseSeconds = Math.max(config.leaseSeconds, 2);
    this.idleMs = config.appSessionIdleSeconds * 1000;
  }

  /**
   * A use of the open session of `key`, opening one when there is none (one open at a time per
   * key). `executionId` is recorded on a new scope row: the work that opened it.
   */
  async use(key: SessionKey, executionId: string, signal?: AbortSignal): Promise<SessionUse> {
    if (this.stopped) throw new Error('the node is shutting down: no App session can be opened');
    const name = keyName(key);
    let scope = this.scopes.get(name);
    if (scope === undefined || scope.retired) {
      let opening = this.opening.get(name);
      if (opening === undefined) {
        opening = this.open(key, name, executionId, signal).finally(() => this.opening.delete(name));
        this.opening.set(name, opening);
      }
      scope = await opening;
    }
    scope.uses += 1;
    let released = false;
    const use: SessionUse = {
      scopeId: scope.id,
      connection: scope.connection,
      discard: () => this.retire(scope),
      release: async () => {
        if (released) return;
        released = true;
        scope.uses -= 1;
        scope.idleSince = Date.now();
        await this.noteSession(scope);
        if (scope.retired && scope.uses === 0) await this.close(scope);
      },
    };
    return use;
  }

  private async open(key: SessionKey, name: string, executionId: string, signal?: AbortSignal): Promise<Scope> {
    const target = await this.client.targetOf(this.db, key.connectionId);
    if (target === null) throw Object.assign(new Error('the connection was deleted'), { connectionGone: true });
    const connection = await this.client.open(target, { actor: key.actor, ...(signal ? { signal } : {}) });
    const scope: Scope = { id: newId(), key: name, connectionId: key.connectionId, connection, sessionId: connection.sessionId, uses: 0, retired: false, closed: false, idleSince: Date.now() };
    try {
      await this.db.count({
        name: 'apps.scope_open',
        text: `INSERT INTO app_connection_scopes (id, connection_id, node_id, execution_id, url, era, session_id, lease_until)
               VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
        values: [scope.id, key.connectionId, this.engine.nodeId, executionId, connection.url, connection.era, connection.sessionId, this.leaseSeconds],
      });
    } catch (error) {
      // Not recorded, so not ours to keep: ended at once.
      await connection.close().catch(() => undefined);
      throw error;
    }
    // Sessions of the same connection and actor at an older revision take no new calls.
    for (const other of this.scopes.values()) if (other.connectionId === key.connectionId && other.key !== name) this.retire(other);
    this.scopes.set(name, scope);
    this.arm();
    return scope;
  }

  /** A legacy server that lost the session got a new one inside the connection: the row names the session to end. */
  private async noteSession(scope: Scope): Promise<void> {
    const now = scope.connection.sessionId;
    if (now === scope.sessionId) return;
    scope.sessionId = now;
    await this.db.count({ name: 'apps.scope_session', text: 'UPDATE app_connection_scopes SET session_id = $2 WHERE id = $1 AND close_result IS NULL', values: [scope.id, now] }).catch(() => undefined);
  }

  private retire(scope: Scope): void {
    if (scope.retired) return;
    scope.retired = true;
    if (this.scopes.get(scope.key) === scope) this.scopes.delete(scope.key);
    this.retiring.add(scope);
    if (scope.uses === 0) void this.close(scope);
  }

  /**
   * Ends the session (DELETE for a legacy one) and stores the close result; a failed close leaves
   * the row open for the cleanup and keeps its error ID there, after this node stops (RES-06).
   */
  private async close(scope: Scope): Promise<void> {
    if (scope.closed) return;
    scope.closed = true;
    scope.retired = true;
    if (this.scopes.get(scope.key) === scope) this.scopes.delete(scope.key);
    this.retiring.delete(scope);
    let result: Record<string, unknown>;
    try {
      result = { ...(await scope.connection.close()) };
    } catch (error) {
      await this.keepFailedClose(scope, error);
      return;
    }
    await this.db
      .count({ name: 'apps.scope_close', text: 'UPDATE app_connection_scopes SET closed_at = now(), close_result = $2 WHERE id = $1 AND close_result IS NULL', values: [scope.id, JSON.stringify(result)] })
      .catch(() => undefined);
  }

  /**
   * A failed close: its cause sealed in an error record, its error ID on the scope row, both in
   * one transaction. The row stays without a close result: not proven released (RES-06). A write
   * the database refuses leaves the row as it was, for the cleanup.
   */
  private async keepFailedClose(scope: Scope, error: unknown): Promise<void> {
    const failure = toFailure(error, 'close');
    const errorId = newId<ErrorId>();
    await this.db
      .transaction(async (tx) => {
        await this.failures.record(tx, { errorId, category: failure.category, origin: `app-session-close:${failure.reason}`, cause: failure });
        await tx.query({ name: 'apps.scope_close_failed', text: 'UPDATE app_connection_scopes SET close_error_id = $2 WHERE id = $1 AND close_result IS NULL', values: [scope.id, errorId] });
      })
      .catch(() => undefined);
  }

  private arm(): void {
    if (this.timer !== null || this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), Math.max(200, (this.leaseSeconds * 1000) / 3));
    this.timer.unref();
  }

  /** Renews the leases of the open scopes, and closes those that are idle, of a deleted connection, or of an older revision. */
  private async tick(): Promise<void> {
    this.timer = null;
    const open = [...this.scopes.values()];
    if (open.length === 0 || this.stopped) return;
    let kept: Set<string>;
    try {
      const rows = await this.db.rows<{ id: string }>({
        name: 'apps.scope_renew',
        text: `UPDATE app_connection_scopes s SET lease_until = now() + make_interval(secs => $2)
                 FROM app_connections c
                WHERE s.id = ANY($1::uuid[]) AND c.id = s.connection_id AND c.deleting_at IS NULL AND s.close_result IS NULL
                RETURNING s.id`,
        values: [open.map((s) => s.id), this.leaseSeconds],
      });
      kept = new Set(rows.map((r) => r.id));
    } catch {
      // The lease cannot be checked: the owner closes (RES-06).
      kept = new Set();
    }
    const now = Date.now();
    for (const scope of open) {
      if (!kept.has(scope.id)) this.retire(scope);
      else if (scope.uses === 0 && now - scope.idleSince >= this.idleMs) this.retire(scope);
    }
    this.arm();
  }

  /** Ends every session of this node before it stops. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const all = [...this.scopes.values(), ...this.retiring];
    for (const scope of all) scope.uses = 0;
    this.retiring.clear();
    this.scopes.clear();
    await Promise.all(all.map((scope) => this.close(scope)));
  }
}

function keyName(key: SessionKey): string {
  return `${key.connectionId}:${key.revision}:${key.actor === null ? '-' : `${key.actor.kind}:${key.actor.id}`}`;
}

/**
 * The sessions one phase run holds (RES-01): at most one use per key, taken by its first App call
 * and released when the phase closes its resources (before it ends or waits). A use whose session
 * failed under a call is dropped, so the phase's later calls open a new session.
 */
export class PhaseSessions {
  private readonly held = new Map<string, Promise<SessionUse>>();

  constructor(
    private readonly sessions: AppSessions,
    private readonly resources: { defer(release: () => Promise<void> | void): void },
    private readonly executionId: string,
  ) {}

  get(key: SessionKey, signal?: AbortSignal): Promise<SessionUse> {
    const name = keyName(key);
    let use = this.held.get(name);
    if (use === undefined) {
      use = this.sessions.use(key, this.executionId, signal).then(async (taken) => {
        try {
          this.resources.defer(() => taken.release());
        } catch (error) {
          // The phase closed meanwhile: nothing may be sent under it.
          await taken.release();
          throw error;
        }
        return taken;
      });
      this.held.set(name, use);
      use.catch(() => this.held.delete(name));
    }
    return use;
  }

  /** The session failed under a call: it takes no more calls, and closes when its uses are released. */
  drop(key: SessionKey, use: SessionUse): void {
    use.discard();
    this.held.delete(keyName(key));
  }
}
