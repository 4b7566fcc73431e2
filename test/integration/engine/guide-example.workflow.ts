import { codec, defineWorkflow, type Codec } from '@openbot/engine';

/** The example of docs/engine.md, run by guide-example.spec.ts. */

interface QuoteState {
  readonly customer: string;
  readonly answerWithinMs: number;
  readonly price: number | null;
  readonly decision: 'approved' | 'rejected' | 'expired' | null;
  readonly decidedBy: string | null;
}

const DECISIONS = ['approved', 'rejected', 'expired'] as const;

export const QUOTE = defineWorkflow({
  name: 'guide.quote',
  audience: 'service',
  input: codec.object({ customer: codec.string, answerWithinMs: codec.number }),
  state: codec.object({
    customer: codec.string,
    answerWithinMs: codec.number,
    price: codec.nullable(codec.number),
    decision: codec.nullable(codec.oneOf(DECISIONS)),
    decidedBy: codec.nullable(codec.string),
  }) satisfies Codec<QuoteState>,
  result: codec.object({ price: codec.number, decision: codec.oneOf(DECISIONS), decidedBy: codec.nullable(codec.string) }),
  signals: { decision: codec.object({ approved: codec.boolean, by: codec.string }) },
  calls: { price: codec.object({ amount: codec.number }) },
});

/** A price service outside the platform: asked once per quote, whatever happens to the node. */
export interface PriceService {
  priceOf(customer: string, idempotencyKey: string): Promise<number>;
}

/**
 * A quote: ask the price service, then wait for someone's decision, at most `answerWithinMs`.
 * price → (wait: decision signal or timer) → decide → completed.
 */
export function quoteWorkflow(deps: { readonly prices: PriceService }) {
  return QUOTE.implement({
    initial: ({ customer, answerWithinMs }) => ({ customer, answerWithinMs, price: null, decision: null, decidedBy: null }),
    next: (state) => {
      if (state.price === null) return { phase: 'price' };
      if (state.decision === null) return { phase: 'decide' };
      return { end: 'completed', result: { price: state.price, decision: state.decision, decidedBy: state.decidedBy } };
    },
    phases: {
      price: {
        async run(context) {
          // Through the call log: a saved answer is reused after a takeover, never asked again.
          const { amount } = await context.call('price', { safe: true }, async (request) => ({
            amount: await deps.prices.priceOf(context.state.customer, request.idempotencyKey),
          }));
          const until = new Date(context.clock.now() + context.state.answerWithinMs);
          return { state: { ...context.state, price: amount }, wait: { signals: ['decision'], until } };
        },
      },
      decide: {
        async run(context) {
          // Why the execution woke: the decision signal (typed payload), or the timer.
          const signal = context.wake?.signals.find((s) => s.name === 'decision');
          if (signal === undefined) return { state: { ...context.state, decision: 'expired' } };
          const decision = signal.payload.approved ? 'approved' : 'rejected';
          return { state: { ...context.state, decision, decidedBy: signal.payload.by } };
        },
      },
    },
  });
}
