import type { ExecutionId } from '@openbot/domain';
import type { ExecutionView } from '@openbot/engine';
import type { Database } from '../../database/sql';
import type { ModelCalls } from '../../models/model-calls';
import type { HttpToolClient } from './http-tool';
import type { AppToolDeps } from './app-tool';
import { modelPhase } from './model-phase';
import { toolPhase } from './tool-phase';
import { withSpend } from './turn-spend';
import { TURN } from './turn-contract';
import { endTurn } from './turn-end';
import type { TurnHooks } from './turn-hooks';
import type { TurnMemoryDeps } from './turn-memory';
import type { TurnFileDeps } from './turn-files';
import { initialTurnState, nextTurnDecision, turnLimitStop } from './turn-state';

/** What a Turn needs from its node. */
export interface TurnDeps {
  readonly db: Database;
  readonly models: ModelCalls;
  readonly hooks: TurnHooks;
  readonly http: HttpToolClient;
  readonly apps: AppToolDeps;
  /** The safe view of an execution: how the Turn reads its failed background tool. */
  readonly readExecution: (id: ExecutionId) => Promise<ExecutionView | null>;
  /** OPENBOT_MAX_DELEGATION_DEPTH: how deep delegate tools may nest tasks. */
  readonly maxDelegationDepth: number;
  /** The organization limit `toolCallsPerStep` (decision 076). */
  readonly toolCallsPerStep: number;
  /** Bot memory: where Turns of Bots with memory enabled select their context (absent: memory is off). */
  readonly memory?: TurnMemoryDeps;
  /** Where the files of messages and tool results are read at each model call's send (decision 036). */
  readonly files?: TurnFileDeps;
  /** The permissions a Turn's identity allows (its approvals keep them, decision 075); null when it has none. */
  readonly turnPermissions?: (executionId: string) => Promise<readonly string[] | null>;
}

/**
 * The Turn (`chat.turn`, decision 009): model step → tool steps → model step … until a final
 * answer or a limit; its end writes the reply and admits the next input. Its input, state,
 * signal and calls are declared in turn-contract.ts.
 */
export function turnWorkflow(deps: TurnDeps) {
  return TURN.implement({
    initial: initialTurnState,
    next: (state, wake, clock) => nextTurnDecision(state, wake, clock.now()),
    phases: {
      model: withSpend(
        modelPhase({
          db: deps.db,
          models: deps.models,
          hooks: deps.hooks,
          ...(deps.memory ? { memory: deps.memory } : {}),
          ...(deps.files ? { files: deps.files } : {}),
          ...(deps.turnPermissions ? { turnPermissions: deps.turnPermissions } : {}),
          toolCallsPerStep: deps.toolCallsPerStep,
        }),
      ),
      tool: withSpend(toolPhase({ db: deps.db, http: deps.http, apps: deps.apps, hooks: deps.hooks, readExecution: deps.readExecution, maxDepth: deps.maxDelegationDepth, toolCallsPerStep: deps.toolCallsPerStep })),
    },
    end: endTurn,
    // `execution.ended` names the limit that ended the Turn, as `GET /v1/executions/{id}` does.
    endedFacts: ({ state, outcome, result }) => ({ stop: turnLimitStop(state, outcome, result?.stop) }),
  });
}
