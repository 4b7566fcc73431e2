import type { Database } from '../../../../platform/src/database/sql';
import type { ModelCalls } from '../../../../platform/src/models/model-calls';
import type { ToolCalls } from '../../../../platform/src/tool-calls/tool-calls';
import type { ApprovalGate } from '../../../../platform/src/turn-core/approval-gate';
import { modelPhase } from './model-phase';
import { toolPhase } from './tool-phase';
import { withSpend } from './turn-spend';
import { TURN } from '../../../../platform/src/turn-core/turn-contract';
import { endTurn } from './turn-end';
import type { TurnHooks } from './turn-hooks';
import type { TurnMemoryDeps } from './turn-memory';
import type { TurnFileDeps } from './turn-files';
import { initialTurnState, nextTurnDecision, turnLimitStop } from '../../../../platform/src/turn-core/turn-state';

/** What a Turn needs from its node. */
export interface TurnDeps {
  readonly db: Database;
  readonly models: ModelCalls;
  readonly hooks: TurnHooks;
  /** How the Turn's tool calls are answered: every tool kind is its feature's, registered with TurnTools (decision 078). */
  readonly toolCalls: ToolCalls;
  /** The approval-gate hook: where gated calls are requested (decision 078). */
  readonly approvals: ApprovalGate;
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
          approvals: deps.approvals,
          tools: deps.toolCalls,
          ...(deps.memory ? { memory: deps.memory } : {}),
          ...(deps.files ? { files: deps.files } : {}),
          ...(deps.turnPermissions ? { turnPermissions: deps.turnPermissions } : {}),
          toolCallsPerStep: deps.toolCallsPerStep,
        }),
      ),
      tool: withSpend(toolPhase({ db: deps.db, toolCalls: deps.toolCalls, hooks: deps.hooks, toolCallsPerStep: deps.toolCallsPerStep })),
    },
    end: endTurn,
    // `execution.ended` names the limit that ended the Turn, as `GET /v1/executions/{id}` does.
    endedFacts: ({ state, outcome, result }) => ({ stop: turnLimitStop(state, outcome, result?.stop) }),
  });
}
