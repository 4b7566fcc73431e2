import { McpFailure, toFailure } from '@openbot/protocol';
import type { SendActor } from '../../../platform/src/vaults/vault-secrets';
import type { AppClient, ConnectionTarget } from './app-client';
import type { ConnectionState } from './app-view';

/** What a probe found: the state to save, the negotiated era, and the failure when there is one. */
export interface ProbeOutcome {
  readonly state: ConnectionState;
  readonly era: 'legacy' | 'modern' | null;
  readonly protocolVersion: string | null;
  readonly failure: McpFailure | null;
}

/** Time a probe may take (handshake and close). */
const PROBE_TIMEOUT_MS = 15_000;

/**
 * Probes a prepared connection (GRANT-06): the MCP handshake only (no capability list, STC-12),
 * then a close (DELETE of a legacy session). A 401/403 means the server needs authorization;
 * anything else that fails is `failed`, with the failure kept for its sealed error record.
 * Never inside a database transaction.
 */
export async function probeConnection(client: AppClient, target: ConnectionTarget, actor: SendActor | null, signal?: AbortSignal): Promise<ProbeOutcome> {
  try {
    const connection = await client.open(target, { actor, timeoutMs: PROBE_TIMEOUT_MS, ...(signal ? { signal } : {}) });
    const outcome = { era: connection.era, protocolVersion: connection.protocolVersion };
    await connection.close().catch(() => undefined);
    return { state: 'ready', ...outcome, failure: null };
  } catch (error) {
    const failure = toFailure(error, 'open');
    return { state: failure.reason === 'needs_authorization' ? 'needs_authorization' : 'failed', era: null, protocolVersion: null, failure };
  }
}
