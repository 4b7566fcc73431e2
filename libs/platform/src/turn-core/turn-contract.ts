import { codec, defineWorkflow, type Codec, type Json, type WorkflowPhase, type WorkflowPhaseContext } from '@openbot/engine';
import { decodeDeclaration, encodeDeclaration, type ToolDeclaration } from '@openbot/protocol';
import { modelStepResultCodec, toolCallCodec } from '../models/model-step-codec';
import type { ApprovalPolicy } from './tool-spec';
import type { VaultReference } from '../vaults/vault-view';
import { MEMORY_LEARN_ACCESS } from './tool-spec';
import { BOT_TOOL_RETRIES, type BotTool } from './tool-spec';
import { TURN_WORKFLOW, type BotSnapshot, type TurnInput, type TurnMessage, type TurnState, type TurnStop, type TurnToolResult } from './turn-state';

/**
 * How a Turn is stored (decision 019): the codecs of its input, state, result, signal and calls.
 * Each codec is annotated with the type it stores, so the compiler checks it covers every field;
 * a stored value that no longer fits fails its Turn (CALL-07) instead of being cast.
 */

const toolResultCodec: Codec<TurnToolResult> = codec.object({
  callId: codec.string,
  name: codec.string,
  modelOutput: codec.string,
  isError: codec.boolean,
  fileIds: codec.optional(codec.array(codec.string)),
});

/** A Turn's message: file IDs only, never file bytes (decision 036). */
const turnMessageCodec: Codec<TurnMessage> = codec.object({
  role: codec.oneOf(['system', 'user', 'assistant', 'tool']),
  content: codec.string,
  toolCalls: codec.optional(codec.array(toolCallCodec)),
  toolCallId: codec.optional(codec.string),
  fileIds: codec.optional(codec.array(codec.string)),
});

/** `never`, `always` or `{ argument, in }` (decision 025). */
function approvalPolicyCodec(): Codec<ApprovalPolicy> {
  const rule = codec.object({ argument: codec.string, in: codec.array(codec.json) });
  return {
    encode: (value) => (typeof value === 'string' ? value : rule.encode({ argument: value.argument, in: value.in as Json[] })),
    decode: (json, path = '') => (json === 'never' || json === 'always' ? json : rule.decode(json, path)),
  };
}

/** A saved App tool declaration (STC-07): stored as it is, decoded (and checked) by libs/protocol's codec. */
const declarationCodec: Codec<ToolDeclaration> = {
  encode: (value) => JSON.parse(encodeDeclaration(value)) as Json,
  decode: (json) => decodeDeclaration(json),
};

/**
 * A tool's headers: each a Vault reference `{ vaultItemId, field, prefix? }`, saved as given
 * (SEC-02), or null for a literal kept in the tool's sealed `headerSecrets` (decision 036).
 */
function headersCodec(): Codec<Readonly<Record<string, VaultReference | null>>> {
  const reference: Codec<VaultReference | null> = codec.nullable(codec.object({ vaultItemId: codec.string, field: codec.string, prefix: codec.optional(codec.string) }));
  return {
    encode: (value) => Object.fromEntries(Object.entries(value).map(([name, ref]) => [name, reference.encode(ref)])),
    decode: (json, path = '') => Object.fromEntries(Object.entries(codec.jsonObject.decode(json, path)).map(([name, ref]) => [name, reference.decode((ref ?? null) as Json, `${path}.${name}`)])),
  };
}

export const botToolCodec: Codec<BotTool> = codec.object({
  name: codec.string,
  description: codec.string,
  parameters: codec.jsonObject,
  // Any kind's name (decision 080): a kind no feature of this node registers fails its call at answer time, naming the kind.
  kind: codec.optional(codec.string),
  url: codec.optional(codec.string),
  retry: codec.optional(codec.oneOf(BOT_TOOL_RETRIES)),
  headers: codec.optional(headersCodec()),
  headerSecrets: codec.optional(codec.string),
  botId: codec.optional(codec.string),
  attached: codec.optional(codec.boolean),
  approval: codec.optional(approvalPolicyCodec()),
  approvalExpiresInSeconds: codec.optional(codec.number),
  connectionId: codec.optional(codec.string),
  declaration: codec.optional(declarationCodec),
});

const limitsCodec: Codec<BotSnapshot['limits']> = codec.object({
  maxSteps: codec.number,
  maxSeconds: codec.number,
  maxOutputTokens: codec.number,
  maxCostMicros: codec.optional(codec.nullable(codec.number)),
});

const botSnapshotCodec: Codec<BotSnapshot> = codec.object({
  id: codec.string,
  model: codec.string,
  instructions: codec.string,
  tools: codec.array(botToolCodec),
  limits: limitsCodec,
  memory: codec.optional(codec.object({ enabled: codec.boolean, learn: codec.boolean, learnAccess: codec.optional(codec.oneOf(MEMORY_LEARN_ACCESS)) })),
});

const TURN_STOPS = ['stop', 'length', 'max-steps', 'max-output-tokens', 'max-cost', 'budget'] as const satisfies readonly TurnStop[];

const scopeCodec = codec.object({ kind: codec.oneOf(['member', 'service']), id: codec.string });

const turnInputFields = {
  chatId: codec.string,
  turnId: codec.string,
  organizationId: codec.string,
  scope: scopeCodec,
  depth: codec.optional(codec.number),
  attached: codec.optional(codec.boolean),
  caps: codec.optional(codec.object({ maxSteps: codec.number, maxSeconds: codec.number, maxOutputTokens: codec.number, maxCostMicros: codec.optional(codec.number) })),
};

const turnInputCodec: Codec<TurnInput> = codec.object(turnInputFields);

const turnStateCodec: Codec<TurnState> = codec.object({
  ...turnInputFields,
  bot: codec.nullable(botSnapshotCodec),
  startedAt: codec.nullable(codec.number),
  step: codec.number,
  consumed: codec.string,
  added: codec.array(turnMessageCodec),
  pending: codec.array(toolCallCodec),
  results: codec.array(toolResultCodec),
  child: codec.nullable(codec.string),
  children: codec.optional(codec.array(codec.object({ callId: codec.string, childId: codec.string }))),
  gated: codec.optional(codec.array(codec.object({ callId: codec.string, approvalId: codec.string, expiresAt: codec.nullable(codec.number) }))),
  outputTokens: codec.number,
  stop: codec.nullable(codec.oneOf(TURN_STOPS)),
  activeMs: codec.optional(codec.number),
  countingSince: codec.optional(codec.nullable(codec.number)),
  pausedMsSeen: codec.optional(codec.number),
  timedOut: codec.optional(codec.boolean),
  memory: codec.optional(codec.object({ ids: codec.array(codec.string), contents: codec.array(codec.string) })),
  plan: codec.optional(
    codec.object({
      steps: codec.array(codec.object({ title: codec.string, status: codec.oneOf(['pending', 'in_progress', 'done', 'skipped']) })),
      updatedAt: codec.number,
    }),
  ),
});

/** The signal a posted client tool output sends to its Turn. */
export const CLIENT_TOOL_SIGNAL = 'client-tool-output';
/** The signal a decided approval sends to its Turn: the decision itself is the approval row. */
export const APPROVAL_SIGNAL = 'approval-decided';

export const TURN = defineWorkflow({
  name: TURN_WORKFLOW,
  // Member work: a service scope cannot enter it (IDN-11).
  audience: 'member',
  input: turnInputCodec,
  state: turnStateCodec,
  result: codec.object({ stop: codec.oneOf(TURN_STOPS) }),
  // Rows first: the posted output is in `chat_client_tool_calls`; the signal only wakes the Turn.
  signals: { [CLIENT_TOOL_SIGNAL]: codec.object({ callId: codec.string }), [APPROVAL_SIGNAL]: codec.object({ approvalId: codec.string }) },
  calls: {
    model: modelStepResultCodec,
    // `tool:<callId>`: the endpoint's answer, or an operator's decided result, as it was saved.
    tool: codec.json,
  },
});

/** A phase of the Turn, and what it is given. */
export type TurnPhase = WorkflowPhase<TurnState, (typeof TURN)['signals'], (typeof TURN)['calls']>;
export type TurnPhaseContext = WorkflowPhaseContext<TurnState, (typeof TURN)['signals'], (typeof TURN)['calls']>;
