import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChatMessage, ToolResult } from '@openbot/core';
import { isConnectionFailure, newId, type ErrorCategory, type ErrorId } from '@openbot/domain';
import type { Queryable } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { SqlFailureRecorder } from '../../../../platform/src/errors/sql-failure-recorder';

/**
 * The named steps of a Turn where plugins run (STC-08): `turn.started` once the Turn has its Bot
 * snapshot, `model.completed` after a model result is saved, `tool.result` after a tool result is
 * saved. A step can run again after a takeover (the phase is replayed from its last checkpoint).
 */
export type TurnHookPoint = 'turn.started' | 'model.completed' | 'tool.result';

/** What a plugin sees: facts about the step, and one way to write. No handle on the execution. */
export interface TurnHookContext {
  readonly point: TurnHookPoint;
  readonly organizationId: string;
  readonly chatId: string;
  readonly turnId: string;
  readonly executionId: string;
  /** The Turn's model step the hook belongs to (1-based). */
  readonly step: number;
  readonly message?: ChatMessage;
  readonly toolResult?: ToolResult;
  /**
   * Runs `write` in a transaction at most once per plugin, step and `key` of this execution: on a
   * replay the write is skipped, so a hook's rows are never doubled (STC-08).
   */
  once(key: string, write: (tx: Queryable) => Promise<void>): Promise<void>;
}

export interface TurnPlugin {
  readonly name: string;
  readonly points: readonly TurnHookPoint[];
  run(context: TurnHookContext): Promise<void>;
}

type HookFacts = Omit<TurnHookContext, 'once' | 'point'>;

/**
 * The plugins of this node's Turns, run in registration order. A plugin cannot change the
 * execution's lifecycle: it gets no engine handle, its return value is ignored, and a plugin that
 * throws is recorded with its own error record while the Turn goes on. Its context is frozen and
 * carries no actor, token or scope: the Turn's identity is the engine's, whatever order plugins run in.
 */
@Injectable()
export class TurnHooks {
  private readonly logger = new Logger('TurnHooks');
  private readonly plugins: TurnPlugin[] = [];

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(SqlFailureRecorder) private readonly failures: SqlFailureRecorder,
  ) {}

  register(plugin: TurnPlugin): void {
    if (this.plugins.some((p) => p.name === plugin.name)) throw new Error(`turn plugin "${plugin.name}" is registered twice`);
    this.plugins.push(plugin);
  }

  async run(point: TurnHookPoint, facts: HookFacts): Promise<void> {
    for (const plugin of this.plugins) {
      if (!plugin.points.includes(point)) continue;
      // Frozen: a plugin cannot set or change what it is told (an organization, an actor, a scope); identity never comes from plugins (IDN-04).
      const context: TurnHookContext = Object.freeze({ ...facts, point, once: (key: string, write: (tx: Queryable) => Promise<void>) => this.once(plugin.name, point, facts, key, write) });
      try {
        await plugin.run(context);
      } catch (cause) {
        await this.recordFailure(plugin.name, point, facts.executionId, cause);
      }
    }
  }

  private async once(plugin: string, point: TurnHookPoint, facts: HookFacts, key: string, write: (tx: Queryable) => Promise<void>): Promise<void> {
    await this.db.transaction(async (tx) => {
      const { rowCount } = await tx.query({
        name: 'turn.hook_write',
        text: `INSERT INTO turn_hook_writes (execution_id, plugin, point, step, key) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        values: [facts.executionId, plugin, point, facts.step, key],
      });
      if (rowCount === 1) await write(tx);
    });
  }

  /**
   * A plugin failure takes the sealed error path of every fault (ERR-01, ERR-02): its cause is
   * sealed in its error record and the ordinary log gets only the error ID and a category. When
   * the record cannot be saved, the log still names neither cause (either may carry any data).
   */
  private async recordFailure(plugin: string, point: TurnHookPoint, executionId: string, cause: unknown): Promise<void> {
    const errorId = newId<ErrorId>();
    const category: ErrorCategory = 'internal';
    const origin = `turn plugin ${plugin} at ${point}`;
    try {
      await this.failures.record(this.db, { errorId, category, origin, cause, executionId });
    } catch (saveError) {
      const recordCategory: ErrorCategory = isConnectionFailure(saveError) ? 'unavailable' : 'internal';
      this.logger.error({ errorId, category, origin, executionId, recordCategory }, 'turn plugin failed; its error record could not be saved');
      return;
    }
    this.logger.error({ errorId, category, origin, executionId }, 'turn plugin failed');
  }
}
