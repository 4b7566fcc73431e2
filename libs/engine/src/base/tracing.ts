/**
 * What the engine tells a tracer (docs/decisions/040-traces.md). The engine knows no tracing SDK:
 * the product implements this port (OpenTelemetry in libs/platform) and the default does nothing,
 * so an engine without traces pays a no-op call per phase and per call attempt. Attributes are
 * IDs, names, counts and fixed words: never prompt text, a secret or a sealed value.
 */
export interface EngineTracing {
  /** One phase run of an execution (all its attempts), from its start to its result or stop. */
  startPhase(phase: PhaseSpanStart): TraceSpan;
}

/** A span the engine opened; the product may add attributes while it is open. */
export interface TraceSpan {
  /** A child span for one attempt of an outside call made in this phase. */
  startCall(call: CallSpanStart): TraceSpan;
  /** Adds attributes (numbers, words, IDs: never content). */
  set(attributes: SpanAttributes): void;
  /** Names the span after what it turned out to be (a model call: `chat <model>`). */
  rename(name: string): void;
  /** Ends the span; `error` is a short fixed description (an error class or category), never a message with content. */
  end(outcome?: { readonly error?: string }): void;
}

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

export interface PhaseSpanStart {
  readonly executionId: string;
  readonly workflow: string;
  readonly phase: string;
  /** The step the phase's checkpoint will save. */
  readonly step: number;
  /** The owner's generation: a run after a takeover has a higher one (EXE-03). */
  readonly generation: number;
}

export interface CallSpanStart {
  readonly executionId: string;
  /** The call log's key of the call (`<step>:<name>`). */
  readonly callKey: string;
  readonly kind: string;
  readonly attempt: number;
  readonly safe: boolean;
}

/** The span of an engine without a tracer: every call returns at once. */
export const noSpan: TraceSpan = {
  startCall: () => noSpan,
  set: () => undefined,
  rename: () => undefined,
  end: () => undefined,
};

export const noEngineTracing: EngineTracing = { startPhase: () => noSpan };
