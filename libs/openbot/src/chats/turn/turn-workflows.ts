import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Engine, type Json, type Workflow } from '@openbot/engine';
import { DataSource } from 'typeorm';
import { poolOf } from '../../database/pool';
import { EgressClient } from '../../egress/egress-client';
import { ModelCalls } from '../../models/model-calls';
import { chatDeleteWorkflow } from '../delete/chat-delete.workflow';
import { backgroundToolWorkflow } from './background-tool.workflow';
import { modelPhase } from './model-phase';
import { toolPhase } from './tool-phase';
import { TurnHooks } from './turn-hooks';
import { endTurn } from './turn-end';
import { asJson, asTurnState, initialTurnState, nextTurnDecision, TURN_WORKFLOW, type TurnInput } from './turn-state';

/**
 * Registers the Chat workflows (Turn, background tool, delete) with this node's engine (EXE-05).
 * All three are member work: a service scope cannot enter them (IDN-11).
 */
@Injectable()
export class TurnWorkflows implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(ModelCalls) private readonly models: ModelCalls,
    @Inject(EgressClient) private readonly egress: EgressClient,
    @Inject(TurnHooks) private readonly hooks: TurnHooks,
  ) {}

  onModuleInit(): void {
    const pool = poolOf(this.dataSource);
    const http = { fetch: this.egress.fetch, answerLimitBytes: this.egress.limits.toolAnswerBytes };
    const turn: Workflow<Json, Json> = {
      name: TURN_WORKFLOW,
      audience: 'member',
      initial: (input) => asJson(initialTurnState(input as unknown as TurnInput)),
      next: (state, wake, clock) => nextTurnDecision(asTurnState(state), wake, clock.now()),
      phases: {
        model: modelPhase({ pool, models: this.models, hooks: this.hooks }),
        tool: toolPhase({ pool, http, hooks: this.hooks, readExecution: (id) => this.engine.get(id) }),
      },
      end: endTurn,
    };
    this.engine.register(turn);
    this.engine.register(backgroundToolWorkflow({ http }));
    this.engine.register({ ...chatDeleteWorkflow({ pool }), audience: 'member' });
  }
}
