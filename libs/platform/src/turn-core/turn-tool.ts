import { Injectable } from '@nestjs/common';
import type { ToolCall, ToolDefinition } from '@openbot/core';
import type { InputIssue } from '@openbot/domain';
import type { CallRequest, Json, PhaseEvents } from '@openbot/engine';
import type { ToolAnswer } from './tool-answer';
import type { BotTool, BotToolKind } from './tool-spec';
import type { TurnPhaseContext } from './turn-contract';
import type { TurnPlan, TurnState } from './turn-state';

/**
 * Things the calls of one phase run share, each made once by the first call that asks (an App
 * tool keeps its MCP sessions here, released with the phase's resources, RES-01).
 */
export class PhaseScope {
  private readonly held = new Map<string, unknown>();

  get<T>(key: string, make: () => T): T {
    if (!this.held.has(key)) this.held.set(key, make());
    return this.held.get(key) as T;
  }
}

/**
 * What every tool call is answered from (the explicit call context of ToolCalls): whose work it
 * is, where it runs, how its events go out and how its one outside send is logged.
 */
export interface ToolCallContext {
  readonly organizationId: string;
  /**
   * Whose work the call is: Vault references and an App connection's member boundary are checked
   * against it at every send. Absent only in a background tool saved before headers existed: a
   * tool with headers is then refused.
   */
  readonly actor?: { readonly kind: 'member' | 'service'; readonly id: string };
  readonly executionId: string;
  readonly step: number;
  readonly publisher: PhaseEvents;
  /** The phase's resources: what a call holds is released with them (RES-01). */
  readonly resources: { defer(release: () => Promise<void> | void): void };
  /** What the calls of this phase run share (an App tool's sessions). */
  readonly scope: PhaseScope;
  /** The call log (CALL-01): `key` is the call's own entry, so a saved answer is reused and never asked for again. */
  callLog(key: string, options: { readonly safe: boolean; readonly kind: 'tool' }, send: (request: CallRequest) => Promise<Json>): Promise<Json>;
}

/** A tool kind whose call is one outside send (an HTTP endpoint, an App's server): ToolCalls sends it under the call log. */
export interface OutsideToolKind {
  readonly kind: BotToolKind;
  readonly answers: 'send';
  /** What the call's span names as serving it. */
  readonly servedBy: 'http' | 'app';
  /** Whether an attempt may be repeated when its answer is lost (CALL-03). */
  repeatSafe(tool: BotTool): boolean;
  /** One attempt: checks what must hold now (rights, revision, arguments) and sends; an answer the model reads, or a throw the call log handles. */
  send(tool: BotTool, call: ToolCall, request: CallRequest, context: ToolCallContext): Promise<Json>;
}

/** One call of a Turn answered inside the platform (rows, a child execution, the checkpoint). */
export interface TurnToolRun {
  readonly tool: BotTool;
  readonly call: ToolCall;
  readonly context: ToolCallContext;
  readonly phase: TurnPhaseContext;
  readonly state: TurnState;
  /** The child execution this call started in an earlier run of the phase, if any. */
  readonly child: string | undefined;
  /** Publishes `tool.called` (and an approval's decision) once: the kind calls it when the call counts as made. */
  called(): void;
}

/** How a Turn's call stands after its kind looked at it. */
export type TurnToolOutcome =
  | { readonly answer: ToolAnswer; readonly child?: string; readonly plan?: TurnPlan }
  | { readonly waiting: 'signal' }
  | { readonly waiting: 'child'; readonly child?: string };

/** A tool kind answered inside the platform, only within a Turn. */
export interface TurnToolKind {
  readonly kind: BotToolKind;
  readonly answers: 'turn';
  answer(run: TurnToolRun): Promise<TurnToolOutcome>;
}

/**
 * The tool port (decision 078): what a tool kind provides. Its definition for the model (by
 * default the saved name, description and parameters, never its route), the validation of its
 * declaration when a Bot is saved, how one call is answered (one outside send through the call
 * log, or inside the Turn), and whether a call waits for a child execution. The feature that owns the kind implements it and registers it
 * with TurnTools from its module; the Turn and ToolCalls never import a kind.
 */
export type TurnTool = (OutsideToolKind | TurnToolKind) & {
  /** Whether a call of this kind runs as a child execution the Turn waits for (FW-01, decision 025). */
  readonly needsChild: boolean;
  definition?(tool: BotTool): ToolDefinition;
  /** The issues of one declaration of this kind, at `tools.<index>` (its route, its target), when a Bot is saved. */
  validate(tool: BotTool, index: number): InputIssue[];
};

/** The tool kinds of this node, registered by the features that own them (each module's onModuleInit). */
@Injectable()
export class TurnTools {
  private readonly kinds = new Map<string, TurnTool>();

  register(tool: TurnTool): void {
    if (this.kinds.has(tool.kind)) throw new Error(`tool kind "${tool.kind}" is registered twice`);
    this.kinds.set(tool.kind, tool);
  }

  /** The kind's implementation; a kind no feature registered is a broken node, never a guess. */
  of(kind: BotToolKind): TurnTool {
    const tool = this.kinds.get(kind);
    if (tool === undefined) throw new Error(`no feature registered the tool kind "${kind}"`);
    return tool;
  }

  /**
   * The kind's implementation, or undefined when no feature of this node registers it: a Bot
   * saved with such a kind is refused (`tools.<n>.kind`), and a Turn saved with one while its
   * feature was there answers that call with an error naming the kind (decision 080).
   */
  find(kind: BotToolKind): TurnTool | undefined {
    return this.kinds.get(kind);
  }

  /** The kinds a Bot on this node may declare, in the order their features registered them. */
  names(): string[] {
    return [...this.kinds.keys()];
  }
}

/** The issues of a kind that has no route of its own: neither `url` nor `retry` (client, plan, remind, delegate). */
export function routeIssues(tool: BotTool, index: number, article: string): InputIssue[] {
  const issues: InputIssue[] = [];
  if (tool.url !== undefined) issues.push({ path: `tools.${index}.url`, message: `${article} must not have a url` });
  if (tool.retry !== undefined) issues.push({ path: `tools.${index}.retry`, message: `${article} must not have retry` });
  return issues;
}
