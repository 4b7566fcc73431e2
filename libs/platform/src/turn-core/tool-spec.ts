import type { MemberRole } from '@openbot/domain';
import type { ToolDeclaration } from '@openbot/protocol';
import type { VaultReference } from '../vaults/vault-view';

/**
 * The saved declarations a Turn answers tool calls from (STC-07): a Bot's tools as the Turn saved
 * them with its snapshot, their approval policy and the Bot's limits. They live in the Turn core
 * so that the Turn, ToolCalls and every feature that supplies a tool kind read one definition;
 * the Bots feature validates and stores them (bots/bot-view.ts re-exports these names).
 */

/**
 * When a tool call needs a person's yes (decision 025): `never` (the default), `always`, or a rule
 * on the call's arguments — approval when the value at the dotted `argument` path is one of `in`.
 */
export type ApprovalRule = { readonly argument: string; readonly in: readonly unknown[] };
export type ApprovalPolicy = 'never' | 'always' | ApprovalRule;

/**
 * Who may decide a tool's calls besides the defaults (decision 075). By default: the member whose
 * message started the Turn, owners and admins. `roles` and `members` name more approvers;
 * `secondPerson` asks for someone other than the Turn's own member (who then cannot decide). Nobody
 * decides a call of a Turn that runs with rights wider than their own, whatever this names.
 */
export interface ApproverPolicy {
  readonly roles?: readonly MemberRole[];
  readonly members?: readonly string[];
  readonly secondPerson?: boolean;
}

/**
 * The built-in tool kinds, those the product's features register. `client` (the default): the
 * Turn waits until the API caller posts the output. `http`: the platform POSTs the arguments to
 * `url`. `background`: the same HTTP call run as an execution of its own that notifies the Turn
 * when it ends (FW-01, EXE-13). `delegate`: a task, a child Turn of another Bot of the
 * organization in a Chat of its own (decision 025). `plan`: the built-in `update_plan` tool; the
 * plan is saved with the Turn's state. `remind`: the built-in `remind` tool; a durable reminder
 * posts a message into the Chat when due. `app`: the tools of an App connection (decision 031),
 * each saved with its declaration (STC-07).
 *
 * The list documents the product and names its kinds in the OpenAPI; it is not the set a node
 * accepts. A Bot may declare any kind registered with TurnTools on its node (decision 080): a
 * feature adds a kind in its own folder, with no list to extend here.
 */
export const BOT_TOOL_KINDS = ['client', 'http', 'background', 'delegate', 'plan', 'remind', 'app'] as const;
export type BuiltInToolKind = (typeof BOT_TOOL_KINDS)[number];
/** A tool kind's name: a built-in one, or one a feature registers with TurnTools (decision 080). */
export type BotToolKind = BuiltInToolKind | (string & {});

/** How an http or background tool call is repeated when an attempt fails (see `BotTool.retry`). */
export const BOT_TOOL_RETRIES = ['safe', 'unsafe'] as const;
export type BotToolRetry = (typeof BOT_TOOL_RETRIES)[number];

/** A tool definition of a Bot: its parameters are a JSON schema the model fills in. */
export interface BotTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly kind?: BotToolKind;
  /** http and background tools: the organization's endpoint (egress policy applies at call time). */
  readonly url?: string;
  /**
   * http and background tools: `safe` calls are repeated with the same `Idempotency-Key` when an
   * attempt fails; `unsafe` (the default) are sent once and wait in outcome_unknown when the
   * result is lost (CALL-03).
   */
  readonly retry?: BotToolRetry;
  /**
   * http and background tools: headers sent with every call. A Vault reference is opened only at
   * the send, right after its rights, field and `allowedHosts` are checked again (SEC-02). A
   * literal value is given as a string and stored sealed (`headerSecrets`): stored and answered
   * as `null`; a `null` given back keeps the value saved for that header of that tool.
   */
  readonly headers?: Readonly<Record<string, ToolHeaderValue>>;
  /** The sealed record of the tool's literal header values (decision 036); never answered. */
  readonly headerSecrets?: string;
  /** delegate tools: the Bot a call starts a task of. */
  readonly botId?: string;
  /** delegate tools: an attached task (the default) ends before its parent and answers the call; a detached one answers `{ executionId }` at once. */
  readonly attached?: boolean;
  /** Whether a call needs a person's yes before it runs (decision 025); absent means `never`. */
  readonly approval?: ApprovalPolicy;
  /** A pending approval of this tool expires after this many seconds; absent: it never expires. */
  readonly approvalExpiresInSeconds?: number;
  /** Who may decide its calls besides the Turn's member, owners and admins, and whether a second person must (decision 075). */
  readonly approvers?: ApproverPolicy;
  /** app entries: the connection whose tools the Bot uses. */
  readonly connectionId?: string;
  /** app entries: the server names of the tools used (all of them when absent). */
  readonly tools?: readonly string[];
  /** app entries: the declarations saved when the Bot was saved (name, schema, connection revision, digest). */
  readonly declarations?: readonly ToolDeclaration[];
  /** One App tool of a Turn's snapshot (an app entry expanded): the saved declaration its calls send. */
  readonly declaration?: ToolDeclaration;
}

/** Limits of one Turn; absent keys take DEFAULT_BOT_LIMITS. */
export interface BotLimits {
  /** Most model steps per Turn. */
  readonly maxSteps?: number;
  /** Most seconds a Turn may run: counted while it can run, not while paused or waiting only for approvals (TASK-03). */
  readonly maxSeconds?: number;
  /** Most output tokens a Turn may use, summed over its model steps (confirmed usage only). */
  readonly maxOutputTokens?: number;
  /**
   * Most micros a run may cost, from its saved usage plus its reservations, checked before every
   * model call (billing: stop `max-cost`); null, the default, means none.
   */
  readonly maxCostMicros?: number | null;
}

/** A tool header's value: a Vault reference, a literal (as given; sealed when saved), or null (a sealed literal). */
export type ToolHeaderValue = VaultReference | string | null;

export const PLAN_STEP_STATUSES = ['pending', 'in_progress', 'done', 'skipped'] as const;

/**
 * Who reads what a Turn taught: `member` (the default) stores learned items for the Turn's member
 * alone (`{ kind: 'members', ids: [member] }`); `bot` for every Turn of the Bot, where nothing the
 * Turn read was narrower (see the learner).
 */
export const MEMORY_LEARN_ACCESS = ['member', 'bot'] as const;
export type MemoryLearnAccess = (typeof MEMORY_LEARN_ACCESS)[number];
