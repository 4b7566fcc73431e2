import type { EgressPolicy } from '../egress/egress-policy';

/** The egress policy refused a URL at call time (a provider or tool URL that now resolves somewhere forbidden). */
export class EgressRefused extends Error {
  override readonly name = 'EgressRefused';
  /** Repeating the request cannot help. */
  readonly safeToRetry = false;
}

/**
 * `fetch` that asks the egress policy right before every request (configuration-time checks do
 * not stop DNS rebinding) and never follows redirects on its own: a redirect answer is returned
 * as it is, so no request reaches a host the policy did not see.
 */
export function egressFetch(policy: EgressPolicy): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const decision = await policy.check(url);
    if (!decision.allowed) throw new EgressRefused(`egress policy refused ${new URL(url).host}: ${decision.reason}`);
    return fetch(input, { ...init, redirect: 'manual' });
  };
}
