import { Injectable } from '@nestjs/common';
import type { ToolCall } from '@openbot/core';
import type { BotTool } from './tool-spec';
import type { GatedCall } from './turn-state';

/**
 * The approval gate of one Turn (decision 025, REL-02): there is no process-wide gate or map of
 * approvals. The Turn reads its own approval rows (rows first: a decision is saved before the
 * signal that wakes the Turn), so a decision made during a takeover or a restart is never lost.
 */
export type GateState = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';

export interface Gate {
  readonly approvalId: string;
  readonly state: GateState;
  readonly reason: string | null;
}

/** What the model reads for a call a person did not approve. */
export function refusalOutput(name: string, gate: Gate): string {
  const why = gate.state === 'expired' ? 'the approval expired before anyone decided' : gate.state === 'cancelled' ? 'the approval was cancelled' : 'a person denied it';
  return `Error: the call to "${name}" was not run: ${why}.${gate.reason ? ` Reason: ${gate.reason}` : ''}`;
}

/** The earliest expiry of the calls still waiting for a decision, as a timer. */
export function nextExpiry(gated: readonly GatedCall[], waiting: ReadonlySet<string>): number | null {
  let earliest: number | null = null;
  for (const g of gated) {
    if (!waiting.has(g.callId) || g.expiresAt === null) continue;
    earliest = earliest === null ? g.expiresAt : Math.min(earliest, g.expiresAt);
  }
  return earliest;
}

/** One call's approval request, as the model step saves it (decision 025, decision 075). */
export interface ApprovalRequest {
  readonly approvalId: string;
  readonly organizationId: string;
  readonly executionId: string;
  readonly chatId: string;
  readonly turnId: string;
  readonly step: number;
  readonly call: ToolCall;
  readonly tool: BotTool;
  readonly requestedAt: Date;
  readonly expiresAt: Date | null;
  /** The rights the Turn runs with, kept for the approver rule; null when it has none. */
  readonly turnPermissions: readonly string[] | null;
}

/**
 * The approval-gate hook (decision 078): how the Turn and ToolCalls request and read the
 * decision on a gated call. The Approvals feature owns the rows and implements it; the Turn core
 * only knows this port.
 */
export interface ApprovalGate {
  /** Writes the request with `write`, in the caller's checkpoint transaction (APPR-01). */
  request(write: (sql: string, params: readonly unknown[]) => void, request: ApprovalRequest): void;
  /** The current decision on a gated call; a pending approval past its expiry (engine clock) expires here. */
  read(executionId: string, gated: GatedCall, now: number): Promise<Gate>;
}

/** The node's approval gate, registered by the feature that implements it (Approvals). */
@Injectable()
export class ApprovalGates implements ApprovalGate {
  private gate: ApprovalGate | null = null;

  register(gate: ApprovalGate): void {
    if (this.gate !== null) throw new Error('an approval gate is registered twice');
    this.gate = gate;
  }

  request(write: (sql: string, params: readonly unknown[]) => void, request: ApprovalRequest): void {
    this.registered().request(write, request);
  }

  read(executionId: string, gated: GatedCall, now: number): Promise<Gate> {
    return this.registered().read(executionId, gated, now);
  }

  private registered(): ApprovalGate {
    if (this.gate === null) throw new Error('no feature registered the approval gate');
    return this.gate;
  }
}
