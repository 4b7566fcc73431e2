import { Unavailable } from '@openbot/domain';
import { AnswerTooLarge } from '@openbot/core';
import { errors } from 'jose';
import { EgressRefused } from '../../../platform/src/egress/egress-client';
import { DiscoveryFailed } from './oidc-discovery';

/**
 * A failure to reach or read the identity provider (discovery, keys, token endpoint, egress
 * refusal, timeouts) as a 503 Unavailable, its cause kept for the error record; null for
 * anything else, which stays a fault of its own kind.
 */
export function providerUnreachable(error: unknown): Unavailable | null {
  const reachable =
    error instanceof DiscoveryFailed ||
    error instanceof EgressRefused ||
    error instanceof AnswerTooLarge ||
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    (error instanceof Error && (error.name === 'InternalOAuthError' || error.name === 'TimeoutError' || error.name === 'AbortError')) ||
    (error instanceof TypeError && error.message === 'fetch failed');
  if (!reachable) return null;
  const failure = new Unavailable('The identity provider could not be reached or answered unusably; try again later.');
  return Object.assign(failure, { cause: error });
}
