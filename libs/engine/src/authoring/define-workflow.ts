import type { ErrorCategory, ExecutionId } from '@openbot/domain';
import type { CallOptions, CallRequest } from '../logs/call-log';
import type { Clock } from '../base/clock';
import { InvalidStoredJson, remembered, type Codec, type Decoded } from './codec';
import type { Transaction } from '../base/tx';
import type { Decision, EndContext, Json, Phase, PhaseContext, PhaseOutcome, ResourceRef, WaitFor, Wake, Workflow } from './workflow';

/**
 * The typed authoring layer over the kernel (docs/engine.md, decision 019). A feature declares
 * its workflow's name, the codecs of its input, state, result, signals and outside calls once;
 * its phases then see their own types and the engine keeps storing JSON. Stored JSON is checked
 * by the codec when it is read: data that no longer fits fails the execution (CALL-07).
 */

/** Signal name → codec of its payload. */
export type SignalCodecs = Readonly<Record<string, Codec<unknown>>>;
/** Call name → codec of its saved result; a call `name` may also be sent as `name:<key>` (one call per key). */
export type CallCodecs = Readonly<Record<string, Codec<unknown>>>;
type None = Readonly<Record<never, never>>;

export type SignalName<Sg> = keyof Sg & string;
/** A saved signal as a phase sees it: its name and its decoded payload. */
export type SignalOf<Sg> = { [K in SignalName<Sg>]: { readonly name: K; readonly payload: Decoded<Sg[K]> } }[SignalName<Sg>];
/** `model`, or `tool:<callId>` for a call declared as `tool`. */
export type CallName<C> = { [K in keyof C & string]: K | `${K}:${string}` }[keyof C & string];
export type CallResult<C, N> = N extends keyof C ? Decoded<C[N]> : N extends `${infer K}:${string}` ? (K extends keyof C ? Decoded<C[K]> : never) : never;

/** The kernel's Wake with each consumed signal's payload decoded by its codec. */
export interface WorkflowWake<Sg> extends Omit<Wake, 'signals'> {
  readonly signals: ReadonlyArray<SignalOf<Sg>>;
}

/** The kernel's WaitFor; `signals` only names declared signals (a saved, unconsumed one wakes it at once). */
export interface WorkflowWait<Sg> extends Omit<WaitFor, 'signals'> {
  readonly signals?: ReadonlyArray<SignalName<Sg>>;
}

export type WorkflowOutcome<S, Sg> = { readonly state: S } | { readonly state: S; readonly wait: WorkflowWait<Sg> };

export type WorkflowDecision<P extends string, R> =
  | { readonly phase: P }
  | { readonly end: 'completed'; readonly result?: R }
  | { readonly end: 'failed'; readonly category?: ErrorCategory; readonly cause: unknown };

/** CallOptions whose `commit` sees the decoded result. */
export interface WorkflowCallOptions<T> extends Omit<CallOptions, 'commit'> {
  readonly commit?: (tx: Transaction, saved: { readonly callId: string; readonly attempt: number; readonly result: T }) => Promise<void>;
}

/** What a child workflow must declare to be started and read with its own types. */
export interface ChildWorkflow<I, R> {
  readonly name: string;
  readonly input: Codec<I>;
  readonly result: Codec<R> | undefined;
}

/**
 * The kernel's PhaseContext with the feature's types: `state`, `wake`, `call`, `startChild` and
 * `childResult` are typed; the call log is reached only through `call`, under a declared name.
 */
export interface WorkflowPhaseContext<S, Sg, C> extends Omit<PhaseContext<Json>, 'state' | 'wake' | 'calls' | 'startChild' | 'childResult' | 'inbox'> {
  readonly state: S;
  readonly wake: WorkflowWake<Sg> | null;
  /** Declared signals sent while the phase runs, payloads decoded; consumed with its checkpoint (decision 021). */
  readonly inbox: WorkflowInbox<Sg>;
  /** An outside call through the call log (CALL-01): the result is encoded when saved and decoded when reused. */
  call<N extends CallName<C>>(name: N, options: WorkflowCallOptions<CallResult<C, N>>, send: (request: CallRequest) => Promise<CallResult<C, N>>): Promise<CallResult<C, N>>;
  /** Starts a child at the next checkpoint, in the same transaction (STC-01, EXE-13). */
  startChild<I>(child: ChildWorkflow<I, unknown>, input: I, options?: { readonly attached?: boolean; readonly resource?: ResourceRef; readonly identityHint?: Json }): ExecutionId;
  /** A completed child's decoded result; undefined while it has not completed (or declares no result). */
  childResult<R>(child: Pick<ChildWorkflow<unknown, R>, 'result'>, childId: ExecutionId): Promise<R | undefined>;
}

/** The kernel's PhaseInbox under declared signal names, with decoded payloads. */
export interface WorkflowInbox<Sg> {
  /** The unread stored signals of these names, oldest first. */
  receive(names: ReadonlyArray<SignalName<Sg>>): Promise<Array<SignalOf<Sg>>>;
  /** Waits until a signal of these names is stored (answers them), or throws GateClosed when the gate closes; [] once `until` aborts. */
  next(names: ReadonlyArray<SignalName<Sg>>, until?: AbortSignal): Promise<Array<SignalOf<Sg>>>;
}

export interface WorkflowPhase<S, Sg, C> {
  run(context: WorkflowPhaseContext<S, Sg, C>): Promise<WorkflowOutcome<S, Sg>>;
  /** Runs after the phase's resources closed and its result was saved (EXE-07). */
  after?(context: { readonly executionId: ExecutionId; readonly state: S }): Promise<void>;
  /** Retries of a failing phase (default 0). */
  readonly retries?: number;
}

export interface WorkflowEndContext<S> extends Omit<EndContext<Json>, 'state'> {
  readonly state: S;
}

/** How the workflow runs: what the feature writes, with its own types. */
export interface WorkflowParts<S, I, R, Sg, C, P extends string> {
  /** The first state, from the decoded input. */
  initial(input: I): S;
  /** Decides from the saved state what runs next (EXE-07): a phase, or the end; the time is the engine clock's (TASK-03). */
  next(state: S, wake: WorkflowWake<Sg> | null, clock: Clock): WorkflowDecision<P, R>;
  readonly phases: Readonly<Record<P, WorkflowPhase<S, Sg, C>>>;
  /**
   * The feature's end rows, in the end checkpoint's transaction (STC-01). Not run when the
   * stored state no longer decodes: the execution then fails with that as its cause (CALL-07).
   */
  end?(context: WorkflowEndContext<S>): Promise<void>;
  /** Fields added to the `execution.ended` event, from the final state (and result, when completed). Not run when the state no longer decodes. */
  endedFacts?(context: { readonly state: S; readonly outcome: EndContext<Json>['outcome']; readonly result: R | undefined }): Record<string, Json>;
}

/** What is declared once per workflow: its name, who may submit it, and how its data is stored. */
export interface WorkflowSpec<S, I, R, Sg, C> {
  readonly name: string;
  /** Who may submit it (IDN-11); undeclared: either. */
  readonly audience?: 'member' | 'service';
  readonly input: Codec<I>;
  readonly state: Codec<S>;
  /** The completed execution's result; undeclared: it completes without one. */
  readonly result?: Codec<R>;
  readonly signals?: Sg;
  readonly calls?: C;
}

/** Whatever stores signals: the engine, or a transaction's commands to other executions. */
export interface SignalSender<T> {
  signal(executionId: string, name: string, payload?: Json): T;
}

export interface WorkflowDefinition<S, I, R, Sg, C> extends ChildWorkflow<I, R> {
  readonly audience: 'member' | 'service' | undefined;
  readonly state: Codec<S>;
  readonly signals: Sg;
  readonly calls: C;
  /** The `workflow` and encoded `input` of a submit command (spread into submit, submitIn or an end's submit). */
  command(input: I): { readonly workflow: string; readonly input: Json };
  /** Sends a declared signal with its encoded payload, through `sender` (the engine, or a transaction's commands). */
  signal<K extends SignalName<Sg>, T>(sender: SignalSender<T>, executionId: string, name: K, payload: Decoded<Sg[K]>): T;
  /** The kernel workflow to register (`engine.register`), built from the feature's typed parts. */
  implement<P extends string>(parts: WorkflowParts<S, I, R, Sg, C, P>): Workflow<Json, Json>;
}

/**
 * Declares a workflow (decision 019). The types come from the codecs:
 * `defineWorkflow({ name: 'chat.turn', input: turnInput, state: turnState, signals: {...}, calls: {...} })`.
 */
export function defineWorkflow<S, I, R = undefined, Sg extends SignalCodecs = None, C extends CallCodecs = None>(
  spec: WorkflowSpec<S, I, R, Sg, C>,
): WorkflowDefinition<S, I, R, Sg, C> {
  const signals = spec.signals ?? ({} as Sg);
  const calls = spec.calls ?? ({} as C);
  const definition: WorkflowDefinition<S, I, R, Sg, C> = {
    name: spec.name,
    audience: spec.audience,
    input: spec.input,
    state: spec.state,
    result: spec.result,
    signals,
    calls,
    command: (input) => ({ workflow: spec.name, input: spec.input.encode(input) }),
    signal: (sender, executionId, name, payload) => sender.signal(executionId, name, signals[name].encode(payload)),
    implement: (parts) => implement(definition, parts),
  };
  return definition;
}

function implement<S, I, R, Sg extends SignalCodecs, C extends CallCodecs, P extends string>(
  spec: WorkflowDefinition<S, I, R, Sg, C>,
  parts: WorkflowParts<S, I, R, Sg, C, P>,
): Workflow<Json, Json> {
  // One node decodes what it encoded without checking it again; stored JSON is always checked.
  const state = remembered(spec.state);
  const results = new Map<string, Codec<unknown>>(Object.entries(spec.calls).map(([name, codec]) => [name, remembered(codec)]));
  const wakes = new WeakMap<Wake, WorkflowWake<Sg>>();

  const decodeWake = (wake: Wake | null): WorkflowWake<Sg> | null => {
    if (wake === null) return null;
    const known = wakes.get(wake);
    if (known !== undefined) return known;
    const typed: WorkflowWake<Sg> = {
      ...wake,
      signals: wake.signals.map((signal, i) => decodeSignal(spec.signals, signal, `wake.signals[${i}]`)),
    };
    wakes.set(wake, typed);
    return typed;
  };

  const resultCodec = <N extends string>(name: N): Codec<CallResult<C, N>> => {
    const codec = results.get(name) ?? results.get(name.slice(0, name.indexOf(':')));
    if (codec === undefined) throw new Error(`workflow ${spec.name} declares no call "${name}"`);
    // The declared codec of this name: CallResult<C, N> is its decoded type.
    return codec as Codec<CallResult<C, N>>;
  };

  const typedContext = (context: PhaseContext<Json>): WorkflowPhaseContext<S, Sg, C> => ({
    // Everything the kernel gives a phase, with the typed parts in place of the JSON ones.
    ...context,
    state: state.decode(context.state, 'state'),
    wake: decodeWake(context.wake),
    inbox: {
      receive: async (names) => (await context.inbox.receive(names)).map((signal, i) => decodeSignal(spec.signals, signal, `inbox[${i}]`)),
      next: async (names, until) => (await context.inbox.next(names, until)).map((signal, i) => decodeSignal(spec.signals, signal, `inbox[${i}]`)),
    },
    call: async (name, options, send) => {
      const codec = resultCodec(name);
      const { commit, ...rest } = options;
      const kernelOptions: CallOptions =
        commit === undefined ? rest : { ...rest, commit: (tx, saved) => commit(tx, { ...saved, result: codec.decode(saved.result, `call ${name}`) }) };
      const saved = await context.calls.call(name, kernelOptions, async (request) => codec.encode(await send(request)));
      return codec.decode(saved, `call ${name}`);
    },
    startChild: (child, input, options) => context.startChild({ workflow: child.name, input: child.input.encode(input), ...options }),
    childResult: async (child, childId) => {
      const result = await context.childResult(childId);
      return result === undefined || child.result === undefined ? undefined : child.result.decode(result, `child ${childId} result`);
    },
  });

  const phases: Record<string, Phase<Json>> = {};
  for (const [name, phase] of Object.entries<WorkflowPhase<S, Sg, C>>(parts.phases)) {
    phases[name] = {
      retries: phase.retries,
      async run(context): Promise<PhaseOutcome<Json>> {
        const outcome = await phase.run(typedContext(context));
        const encoded = state.encode(outcome.state);
        return 'wait' in outcome ? { state: encoded, wait: outcome.wait } : { state: encoded };
      },
      ...(phase.after === undefined
        ? {}
        : { after: (context: { readonly executionId: ExecutionId; readonly state: Json }) => phase.after!({ executionId: context.executionId, state: state.decode(context.state, 'state') }) }),
    };
  }

  const end = parts.end;
  const endedFacts = parts.endedFacts;
  return {
    name: spec.name,
    ...(spec.audience === undefined ? {} : { audience: spec.audience }),
    initial: (input) => state.encode(parts.initial(spec.input.decode(input, 'input'))),
    next(json, wake, clock): Decision {
      let decision: WorkflowDecision<P, R>;
      try {
        decision = parts.next(state.decode(json, 'state'), decodeWake(wake), clock);
      } catch (error) {
        // Stored data this node cannot read as its type fails the execution, not the node (CALL-07).
        if (error instanceof InvalidStoredJson) return { end: 'failed', category: 'internal', cause: error };
        throw error;
      }
      if ('end' in decision && decision.end === 'completed') {
        return { end: 'completed', result: decision.result === undefined || spec.result === undefined ? null : spec.result.encode(decision.result) };
      }
      return decision;
    },
    phases,
    ...(end === undefined
      ? {}
      : {
          async end(context: EndContext<Json>): Promise<void> {
            let typed: S;
            try {
              typed = state.decode(context.state, 'state');
            } catch (error) {
              // The execution fails with this as its cause; its end rows cannot be written without its state.
              if (error instanceof InvalidStoredJson) return;
              throw error;
            }
            await end({ ...context, state: typed });
          },
        }),
    ...(endedFacts === undefined
      ? {}
      : {
          endedFacts(context: { readonly state: Json; readonly outcome: EndContext<Json>['outcome']; readonly result: Json }): Record<string, Json> {
            try {
              const result = context.result === null || spec.result === undefined ? undefined : spec.result.decode(context.result, 'result');
              return endedFacts({ state: state.decode(context.state, 'state'), outcome: context.outcome, result });
            } catch (error) {
              if (error instanceof InvalidStoredJson) return {};
              throw error;
            }
          },
        }),
  };
}

function decodeSignal<Sg extends SignalCodecs>(codecs: Sg, signal: Wake['signals'][number], path: string): SignalOf<Sg> {
  const codec = codecs[signal.name];
  if (codec === undefined) throw new InvalidStoredJson(`${path}.name`, `a declared signal (got "${signal.name}")`);
  // Checked: the payload decoded with the codec declared for this name.
  return { name: signal.name, payload: codec.decode(signal.payload, `${path}.payload`) } as SignalOf<Sg>;
}
