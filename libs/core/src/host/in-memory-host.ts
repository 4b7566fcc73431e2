import { systemMessage, userMessage, type ChatMessage, type Usage } from '../model/chat';
import { DEFAULT_MODEL_LIMITS, fitToContext, type ModelLimits } from '../context/context-window';
import { isModelFailure, type ModelFailureCategory, type ModelProvider } from '../model/model-provider';
import { runModelStep, type ModelStepResult } from '../turn/model-step';
import { runToolStep, type LocalTool } from '../turn/tool-step';

/** Turn events, shaped like the execution events of docs/http-api.md. */
export type TurnEvent =
  | { readonly type: 'model.started'; readonly step: number; readonly attempt: number }
  | { readonly type: 'text.delta'; readonly step: number; readonly attempt: number; readonly text: string }
  | { readonly type: 'model.completed'; readonly step: number; readonly attempt: number; readonly usage: Usage | null }
  | {
      readonly type: 'model.failed';
      readonly step: number;
      readonly attempt: number;
      readonly category: ModelFailureCategory;
      readonly retrying: boolean;
    }
  | { readonly type: 'tool.called'; readonly step: number; readonly callId: string; readonly name: string }
  | { readonly type: 'tool.result'; readonly step: number; readonly callId: string };

export interface RunTurnOptions {
  readonly provider: ModelProvider;
  readonly model: string;
  readonly instructions?: string;
  readonly tools: readonly LocalTool[];
  /** Earlier messages of the Chat, oldest first (no system message: `instructions` provides it). */
  readonly history: readonly ChatMessage[];
  /** The user's new message. */
  readonly input: string;
  /** Most model steps this Turn may take. */
  readonly maxSteps: number;
  readonly onEvent?: (event: TurnEvent) => void | Promise<void>;
  readonly limits?: ModelLimits;
  /** Most attempts per model step, the first included (default 3). */
  readonly maxAttempts?: number;
  /** Prefix of the provider idempotency key; the key of step N is `<prefix>:step-N` on every attempt. */
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
  /** Injectable for tests; defaults to a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

export type TurnStopReason = 'stop' | 'length' | 'max-steps';

export interface TurnResult {
  /** The Turn's new messages in order: the user input, then assistant and tool messages. */
  readonly messages: readonly ChatMessage[];
  /** The text of the last model step. */
  readonly text: string;
  /** Sum of reported usage; `null` when no model call reported any (unknown, not 0). */
  readonly usage: Usage | null;
  /** Model calls whose usage the provider did not report; their cost is unknown. */
  readonly callsWithoutUsage: number;
  readonly steps: number;
  readonly stopReason: TurnStopReason;
}

const DEFAULT_MAX_ATTEMPTS = 3;

/**
 * The standalone in-memory host (PLAT-02, EXE-06): runs a whole Turn in this process — model
 * step, tool step, model step … — with nothing saved and no recovery promise. If the process dies,
 * the Turn is gone. Durable hosts in libs/features reuse the same steps with checkpoints in between.
 */
export async function runTurn(options: RunTurnOptions): Promise<TurnResult> {
  const emit = async (event: TurnEvent): Promise<void> => {
    await options.onEvent?.(event);
  };
  const limits = options.limits ?? DEFAULT_MODEL_LIMITS;
  const definitions = options.tools.map((tool) => tool.definition);
  const keyPrefix = options.idempotencyKey ?? globalThis.crypto.randomUUID();
  const prefix: ChatMessage[] = options.instructions ? [systemMessage(options.instructions)] : [];
  const added: ChatMessage[] = [userMessage(options.input)];
  let usage: Usage | null = null;
  let callsWithoutUsage = 0;

  for (let step = 1; step <= options.maxSteps; step++) {
    const prompt = fitToContext([...prefix, ...options.history, ...added], limits, definitions).messages;
    const result = await modelStepWithRetry(options, step, prompt, `${keyPrefix}:step-${step}`, emit);
    if (result.usage) {
      usage = addUsage(usage, result.usage);
    } else {
      callsWithoutUsage++;
    }
    if (result.text !== '' || result.toolCalls.length > 0) added.push(result.message);
    const done = (stopReason: TurnStopReason): TurnResult => ({ messages: added, text: result.text, usage, callsWithoutUsage, steps: step, stopReason });

    if (result.toolCalls.length === 0) return done(result.finishReason === 'length' ? 'length' : 'stop');
    const tools = await runToolStep(result.toolCalls, options.tools, {
      signal: options.signal,
      onCall: (call) => emit({ type: 'tool.called', step, callId: call.callId, name: call.name }),
      onResult: (toolResult) => emit({ type: 'tool.result', step, callId: toolResult.callId }),
    });
    added.push(...tools.messages);
    if (step === options.maxSteps) return done('max-steps');
  }
  // maxSteps < 1: no model call at all.
  return { messages: added, text: '', usage, callsWithoutUsage, steps: 0, stopReason: 'max-steps' };
}

/**
 * Retries a safe failure as a new attempt with a new `model.started` (CALL-04). Each attempt
 * builds its text from scratch inside runModelStep, so a dropped attempt's partial text is never
 * joined to the next one; the provider sees the same idempotency key on every attempt.
 */
async function modelStepWithRetry(
  options: RunTurnOptions,
  step: number,
  messages: readonly ChatMessage[],
  idempotencyKey: string,
  emit: (event: TurnEvent) => Promise<void>,
): Promise<ModelStepResult> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 1; ; attempt++) {
    await emit({ type: 'model.started', step, attempt });
    try {
      const result = await runModelStep(
        options.provider,
        { model: options.model, messages, tools: options.tools.map((tool) => tool.definition), idempotencyKey, signal: options.signal },
        (text) => emit({ type: 'text.delta', step, attempt, text }),
      );
      await emit({ type: 'model.completed', step, attempt, usage: result.usage });
      return result;
    } catch (error) {
      if (!isModelFailure(error)) throw error;
      const retrying = error.safeToRetry && attempt < maxAttempts && !options.signal?.aborted;
      await emit({ type: 'model.failed', step, attempt, category: error.category, retrying });
      if (!retrying) throw error;
      await sleep(retryDelayMs(attempt, error.retryAfterSeconds));
    }
  }
}

function addUsage(total: Usage | null, more: Usage): Usage {
  return { inputTokens: (total?.inputTokens ?? 0) + more.inputTokens, outputTokens: (total?.outputTokens ?? 0) + more.outputTokens };
}

/** Provider's Retry-After when given, else 100 ms, 200 ms, 400 ms … capped at 5 s. */
export function retryDelayMs(attempt: number, retryAfterSeconds?: number): number {
  if (retryAfterSeconds !== undefined) return retryAfterSeconds * 1000;
  return Math.min(5_000, 100 * 2 ** Math.max(0, attempt - 1));
}
