import { Inject, Injectable, Optional } from '@nestjs/common';
import { ANTHROPIC_FILE_PARTS, ModelFailure, OPENAI_FILE_PARTS, runModelStep, type ChatMessage, type FilePartType, type ModelStepResult, type ProviderErrorDetail, type ToolDefinition } from '@openbot/core';
import type { ExecutionId } from '@openbot/domain';
import type { CallOptions, CallRequest, Json, PhaseEvents, Queryable } from '@openbot/engine';
import { rateBuckets } from '../billing/rate-buckets';
import { LimitsUnreadable } from '../billing/limits-unreadable';
import { reserve } from '../billing/reservations';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../config/runtime-config';
import { Database } from '../database/sql';
import { OpenbotMetrics } from '../metrics/openbot-metrics';
import { usageHolds } from '../usage/usage-holds';
import { usageRecords, type UsageCall } from '../usage/usage-records';
import { ModelRegistry, type ModelReadAhead } from './model-registry';
import type { ModelProviderKind } from '../model-providers/model-provider-view';

export type { ModelReadAhead };

/** The file parts the adapter of a provider kind sends natively: what a message's files may be (decision 036). */
export function filePartsOf(kind: ModelProviderKind): readonly FilePartType[] {
  return kind === 'anthropic' ? ANTHROPIC_FILE_PARTS : OPENAI_FILE_PARTS;
}
import { describeModelAnswer, describeModelCall } from '../tracing/model-call-span';

/** Attempts of one model call, the first included (CALL-04: each one a new attempt and a new start event). */
export const MODEL_ATTEMPTS = 3;

/** `max_tokens` of a call when the node's config does not say (OPENBOT_MODEL_CALL_MAX_TOKENS). */
export const DEFAULT_MODEL_CALL_MAX_TOKENS = 4_096;

/** The fewest output tokens a call lowered to fit a limit still sends, when the node's config does not say (OPENBOT_MODEL_CALL_MIN_TOKENS, decision 081). */
export const DEFAULT_MODEL_CALL_MIN_TOKENS = 256;

/** Call-log options whose `commit` sees the saved model step. */
export interface ModelCallOptions extends Omit<CallOptions, 'commit'> {
  readonly commit?: (tx: Queryable, saved: { readonly callId: string; readonly attempt: number; readonly result: ModelStepResult }) => Promise<void>;
}

/**
 * The part of a running phase's context a model call needs: its execution, its events, and its
 * call log under the call name `model`, saving and reusing the model step's result. A typed
 * workflow's context is one as it is: its `call`, with `model` declared with
 * `modelStepResultCodec` (model-step-codec.ts).
 */
export interface ModelCallContext {
  readonly executionId: ExecutionId;
  /** The engine's phase step: the call log names the call `<step>:model` (STC-10). */
  readonly step: number;
  readonly publisher: PhaseEvents;
  call(name: 'model', options: ModelCallOptions, send: (request: CallRequest) => Promise<ModelStepResult>): Promise<ModelStepResult>;
}

/** Who a model call is billed to and what it belongs to (USE-01). */
export interface ModelBilling {
  readonly scopeKind: 'member' | 'service';
  readonly scopeId: string;
  readonly botId?: string | null;
  readonly chatId?: string | null;
  readonly turnId?: string | null;
}

export interface ModelCallRequest {
  readonly organizationId: string;
  /** `<provider>/<model>`, resolved within the organization at call time. */
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDefinition[];
  /** The prompt's estimate: held while an attempt runs (USE-03), kept on an unknown record (USE-02). */
  readonly estimatedInputTokens: number;
  /** What is left of the workflow's own output limit (a Bot's `maxOutputTokens`): `max_tokens` is never above it. */
  readonly remainingOutputTokens?: number;
  /** The run's cost cap in micros (a Bot's `limits.maxCostMicros`); null or absent: none. */
  readonly maxCostMicros?: number | null;
  readonly billing: ModelBilling;
  /** The step the `model.*` events carry (the workflow's own numbering, e.g. the Turn's model step). */
  readonly eventStep: number;
  /** Each text piece of an attempt as it streams; whatever it publishes is stored before `model.completed`. */
  readonly onText?: (text: string, position: { readonly step: number; readonly attempt: number }) => void;
  /**
   * Runs right before each attempt sends (after the call log checked the identity): a workflow's
   * own precondition, e.g. that it still holds its shared permit (LIM-01). An error it throws with
   * `notSent: true` reaches the workflow as it is, and nothing is sent.
   */
  readonly beforeSend?: () => Promise<void>;
  /**
   * The model's provider as `readAhead` found it beside the caller's own reads: used when it is
   * for this `model` and the provider exists, so the call skips its own read; otherwise the call
   * resolves the model itself, as without it.
   */
  readonly readAhead?: ModelReadAhead | null;
  /**
   * What this attempt sends in place of `messages`, made right before it sends:
   * e.g. a Turn reads its files' bytes here, so they are never saved with the call (decision 036).
   */
  readonly prepareMessages?: () => Promise<readonly ChatMessage[]>;
}

/**
 * A model call that could not reserve its estimate against a budget or the credits, so it did
 * not send (USE-02, PLAT-08). `budgetId` names the budget, null for the credits. The workflow
 * ends its run with `stop: "budget"`. The credits also refuse a model the platform has not
 * priced (`unpricedModel`, decision 072): under credits no call costs 0 by default.
 */
export class BudgetStop extends Error {
  /** The call log fails the attempt at once, with no error record: nothing was sent. */
  readonly safeToRetry = false;
  readonly notSent = true;
  constructor(
    readonly budgetId: string | null,
    /** True when it is the run's own cap (`limits.maxCostMicros`), not a budget: the `max-cost` stop. */
    readonly maxCost = false,
    /** The model the organization's credits cannot pay for: it has no platform price (and no default price is set). */
    readonly unpricedModel: string | null = null,
  ) {
    super(
      maxCost
        ? 'the run reached its cost cap'
        : unpricedModel !== null
          ? `the model ${unpricedModel} has no platform price`
          : budgetId === null
            ? 'the credits are exhausted'
            : `budget ${budgetId} is exhausted`,
    );
  }
}

/**
 * A model call whose rate-limit bucket has not enough yet (LIM-01): it did not send, and takes
 * nothing. The workflow waits durably on a timer (`waitMs`) and calls again; the call log checks
 * its identity again before that send (IDN-06).
 */
export class RateLimitWait extends Error {
  readonly safeToRetry = false;
  readonly notSent = true;
  constructor(readonly waitMs: number) {
    super(`a rate limit asks to wait ${waitMs} ms`);
  }
}

/**
 * The one way a workflow calls a language model (PLAT-06). Every model call of the platform,
 * whatever workflow makes it, gets the same policy from here:
 * - provider resolution through the ModelRegistry, which opens the API key (sealed, or a Vault
 *   reference checked again) for each attempt only and hands the adapter the egress client
 *   (policy checked before every request);
 * - a safe entry in the execution's call log: retries are new attempts with the same provider
 *   idempotency key (CALL-02, CALL-04), the execution's identity is checked again before each
 *   send (IDN-06), and a takeover reuses a saved result instead of asking again (STC-05);
 * - `max_tokens` on every request, and a reservation per attempt before it sends, against every
 *   budget that applies and the credits (USE-02); `max_tokens` is lowered to what the tightest
 *   of them affords, down to a floor (decision 081); a call that cannot reserve does not send and
 *   throws BudgetStop, as does a call under credits whose model the platform has not priced
 *   (decision 072); a rate limit's empty bucket throws RateLimitWait (LIM-01);
 * - a usage hold per attempt, released however the attempt ends (USE-03); one usage record per
 *   call ID committed with the result and `model.completed` (USE-01), unknown with the estimate
 *   when no usage came (USE-02), when a new owner closed the attempt (USE-04), or when its own
 *   gate cut it off after it sent (a cancel, a pause, a lost lease), settled once by a late result;
 * - the `model.started`, `model.failed`, `model.waiting` and `model.completed` events (decision 082).
 */
@Injectable()
export class ModelCalls {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ModelRegistry) private readonly registry: ModelRegistry,
    // Absent (a workflow test without the node's config): the default per-call cap.
    @Optional() @Inject(RUNTIME_CONFIG) private readonly config?: RuntimeConfig,
    // Absent (a workflow test without the node's modules): nothing is measured.
    @Optional() @Inject(OpenbotMetrics) private readonly metrics?: OpenbotMetrics,
  ) {}

  /**
   * The provider of a Chat's Bot's model, read on the caller's connection beside its own reads of
   * that Bot (decision 052): handed to `call` as `readAhead`, it saves the call a round trip before
   * it sends. Null when the Chat is gone.
   */
  readAhead(db: Queryable, organizationId: string, chatId: string): Promise<ModelReadAhead | null> {
    return this.registry.resolveForChat(db, organizationId, chatId);
  }

  async call(context: ModelCallContext, request: ModelCallRequest): Promise<ModelStepResult> {
    const { executionId, publisher } = context;
    // Holds use the call log's key of this call (STC-10).
    const callKey = `${context.step}:model`;
    const position = (attempt: number) => ({ step: request.eventStep, attempt });
    const billing = (callId: string, attempt: number) => ({ ...usageCall(request, executionId, callId), hold: { callKey, attempt } });
    const ahead = request.readAhead;
    const resolved = ahead?.resolved != null && ahead.model === request.model ? ahead.resolved : await this.registry.resolve(request.organizationId, request.model);
    const cap = this.config?.limits.modelCallMaxTokens ?? DEFAULT_MODEL_CALL_MAX_TOKENS;
    const maxTokens = Math.max(1, Math.min(cap, request.remainingOutputTokens ?? cap));
    // A limit with less room lowers `max_tokens`, down to this floor (never above what the call asks for).
    const minTokens = Math.min(maxTokens, this.config?.limits.modelCallMinTokens ?? DEFAULT_MODEL_CALL_MIN_TOKENS);
    const scope = { organizationId: request.organizationId, scopeKind: request.billing.scopeKind, scopeId: request.billing.scopeId, botId: request.billing.botId ?? null };

    // Labels of this call's metrics: the provider's kind and the model's name, never an ID (decision 034).
    const labels = { providerKind: resolved.kind, model: resolved.modelId };
    // Usage confirmed in the commit, counted once it committed (a rolled-back commit counts nothing).
    let confirmed: { inputTokens: number; outputTokens: number; costMicros: number } | null = null;
    let result: ModelStepResult;
    // Whether this attempt's reservation took from rate-limit buckets: no bucket took the estimate, none is corrected.
    let bucketsTook = true;
    try {
      result = await context.call(
        'model',
        {
          safe: true,
          kind: 'model',
          attempts: MODEL_ATTEMPTS,
          onFailedAttempt: async ({ attempt, error, retrying, retryInMs }) => {
            await usageHolds.release(this.db, executionId, callKey);
            // A refused or unreadable reservation sent nothing: no model attempt started, so none failed.
            if (error instanceof BudgetStop || error instanceof LimitsUnreadable) return;
            for (const event of attemptEvents(error, retrying, retryInMs, Date.now())) publisher.publish(event.type, event.payload, position(attempt));
            await publisher.flush();
          },
          // An attempt sent and never answered (an earlier owner's, or one its gate cut off) may still finish late: unknown until it does (USE-04).
          onAbandonedAttempt: (tx, abandoned) => usageRecords.recordUnsettled(tx, billing(abandoned.callId, abandoned.attempt)),
          commit: async (tx, saved) => {
            const stepResult = saved.result;
            const usage = stepResult.usage ? { inputTokens: stepResult.usage.inputTokens, outputTokens: stepResult.usage.outputTokens } : null;
            // One record per call ID (USE-01); missing usage is unknown with the estimate, never zero (USE-02).
            // The record's statement also releases the call's holds (USE-03).
            const recorded = await usageRecords.record(tx, billing(saved.callId, saved.attempt), usage && { ...usage, cachedInputTokens: stepResult.usage?.cachedInputTokens ?? null });
            confirmed = usage !== null && recorded !== null ? { ...usage, costMicros: recorded.costMicros } : null;
            // The token buckets took the estimate; confirmed usage corrects them (LIM-01).
            if (usage !== null && bucketsTook) await rateBuckets.correct(tx, scope, usage.inputTokens + usage.outputTokens - request.estimatedInputTokens);
            await publisher.publishIn(tx, [{ type: 'model.completed', payload: { usage }, ...position(saved.attempt) }]);
          },
        },
        async (call) => {
          await request.beforeSend?.();
          // The key is opened for this attempt only, its Vault rights checked again, then the identity (IDN-06, SEC-02).
          const provider = await resolved.connect({
            actor: { kind: request.billing.scopeKind, id: request.billing.scopeId },
            ...(call.checkIdentity ? { checkIdentity: call.checkIdentity } : {}),
          });
          const messages = request.prepareMessages ? await request.prepareMessages() : request.messages;
          const reservation = await reserve(this.db, {
            ...scope,
            executionId,
            callKey,
            attempt: call.attempt,
            model: request.model,
            estimatedInputTokens: request.estimatedInputTokens,
            maxTokens,
            minTokens,
            maxCostMicros: request.maxCostMicros ?? null,
            defaultPrice: this.config?.defaultPrice ?? null,
          });
          if (!reservation.reserved) {
            if ('waitMs' in reservation) throw new RateLimitWait(reservation.waitMs);
            if ('unpriced' in reservation) throw new BudgetStop(null, false, request.model);
            throw 'maxCost' in reservation ? new BudgetStop(null, true) : new BudgetStop(reservation.budgetId);
          }
          bucketsTook = reservation.bucketsTook;
          // What the reservation holds is what the request asks for: never more than the limits afford (decision 081).
          const sentMaxTokens = reservation.maxTokens;
          publisher.publish('model.started', null, position(call.attempt));
          describeModelCall(call.span, { providerKind: resolved.kind, model: resolved.modelId, maxTokens: sentMaxTokens });
          const onText = request.onText;
          const sent = performance.now();
          let firstText: number | null = null;
          // Each attempt builds its text from nothing: a dropped attempt's text is never joined to this one (CALL-04).
          const stepResult = await runModelStep(
            provider,
            { model: resolved.modelId, messages, tools: request.tools, maxTokens: sentMaxTokens, idempotencyKey: call.idempotencyKey, signal: call.signal },
            (text) => {
              firstText ??= performance.now();
              onText?.(text, position(call.attempt));
            },
          );
          const answered = performance.now();
          const firstTokenSeconds = firstText === null ? null : (firstText - sent) / 1000;
          this.metrics?.modelCall({ ...labels, firstTokenSeconds, totalSeconds: (answered - sent) / 1000 });
          describeModelAnswer(call.span, stepResult, firstTokenSeconds);
          // Every delta is stored before the result is: `model.completed` always follows them.
          await publisher.flush();
          return stepResult;
        },
      );
    } catch (error) {
      // The call log wraps the refusal in its failed call: the workflow gets the refusal itself.
      const cause = (error as { cause?: unknown } | null)?.cause;
      // Any refusal before sending (a budget, a rate limit, a limit check that could not read, a workflow's own precondition) reaches the workflow as it is.
      throw cause instanceof BudgetStop || cause instanceof RateLimitWait || cause instanceof LimitsUnreadable || (cause as { notSent?: unknown } | null)?.notSent === true ? cause : error;
    }
    if (confirmed !== null) this.metrics?.modelUsage(labels.providerKind, labels.model, confirmed);
    publisher.announce();
    return result;
  }
}

/** A `model.failed` or `model.waiting` event's payload. */
type AttemptEvent = { readonly type: 'model.failed' | 'model.waiting'; readonly payload: { readonly [key: string]: Json } };

/**
 * The events of an attempt that did not answer (decision 082). A rate limit's empty bucket sent
 * nothing and only waits: `model.waiting` with the organization's `rate-limit` as its reason. Any
 * other attempt failed: `model.failed` with its category and, when the provider itself answered,
 * the provider's scrubbed `detail`; a provider's rate limit that is retried adds the wait it asked
 * for, `model.waiting` with the reason `provider-rate-limit`.
 */
export function attemptEvents(error: unknown, retrying: boolean, retryInMs: number | undefined, now: number): AttemptEvent[] {
  if (error instanceof RateLimitWait) return [waiting('rate-limit', error.waitMs, now)];
  const category = failureCategory(error);
  const detail = error instanceof ModelFailure ? error.detail : undefined;
  const failed: AttemptEvent = { type: 'model.failed', payload: { category, retrying, ...(detail !== undefined ? { detail: detailJson(detail) } : {}) } };
  return retrying && category === 'rate-limited' && retryInMs !== undefined ? [failed, waiting('provider-rate-limit', retryInMs, now)] : [failed];
}

function detailJson(detail: ProviderErrorDetail): Json {
  return { status: detail.status, code: detail.code, message: detail.message };
}

/** `model.waiting`: until when the call waits (ISO 8601), the same in whole seconds from now, and why. */
function waiting(reason: 'rate-limit' | 'provider-rate-limit', waitMs: number, now: number): AttemptEvent {
  return { type: 'model.waiting', payload: { reason, until: new Date(now + waitMs).toISOString(), retryAfter: Math.ceil(waitMs / 1000) } };
}

function failureCategory(error: unknown): string {
  const category = (error as { category?: unknown } | null)?.category;
  return typeof category === 'string' ? category : 'unavailable';
}

/** The billing identity of one attempt's call ID. */
function usageCall(request: ModelCallRequest, executionId: string, callId: string): UsageCall {
  const { billing } = request;
  return {
    organizationId: request.organizationId,
    scopeKind: billing.scopeKind,
    scopeId: billing.scopeId,
    botId: billing.botId ?? null,
    chatId: billing.chatId ?? null,
    turnId: billing.turnId ?? null,
    executionId,
    callId,
    model: request.model,
    estimatedInputTokens: request.estimatedInputTokens,
  };
}
