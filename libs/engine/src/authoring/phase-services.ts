import type { CallOptions, CallRequest } from '../logs/call-log';
import type { Json } from '../base/json';
import type { Queryable } from '../base/ports';

/**
 * What a phase sees of the engine's services: narrow interfaces, so `PhaseContext` depends on
 * what a phase may call rather than on the classes behind it (CallLog, EventPublisher, and through
 * them the node's EngineContext), and no import cycle runs through workflow.ts.
 */

/** Outside calls: intent → sending → result, reused after a takeover (CALL-01, EXE-10). Implemented by CallLog. */
export interface PhaseCalls {
  call<T extends Json>(name: string, options: CallOptions, send: (request: CallRequest) => Promise<T>): Promise<T>;
}

/** Events published while a phase runs (EVT-01). Implemented by EventPublisher. */
export interface PhaseEvents {
  publish(type: string, payload?: Json, position?: { step?: number; attempt?: number }): void;
  /**
   * Publishes an event whose payload is `{ text }`. While it waits for its write, more text of
   * the same type and position joins it (the texts concatenated), so a stream of tokens is stored
   * and read as a few events whose texts join to the same string.
   */
  publishText(type: string, text: string, position?: { step?: number; attempt?: number }): void;
  /** Resolves once every event published so far is stored; throws the write failure, if any. */
  flush(): Promise<void>;
  /** Appends events inside the caller's transaction (they commit with its rows); false when fenced off. */
  publishIn(tx: Queryable, events: ReadonlyArray<{ type: string; payload?: Json; step?: number; attempt?: number }>): Promise<boolean>;
  /** Call after the transaction of `publishIn` committed: wakes the readers. */
  announce(): void;
}
