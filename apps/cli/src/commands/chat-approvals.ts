import { OpenbotApiError, unwrap, type ExecutionEvent, type OpenbotClient } from '@openbot/client';
import type { Approval } from './approvals';

/** How much of a tool call's arguments the note shows: enough to recognise the call, never a screenful. */
const ARGUMENTS_SHOWN = 200;

const DECIDED: Readonly<Record<string, string>> = { approve: 'approved', deny: 'denied', expire: 'expired' };

/**
 * What `openbot chat` tells the person while a Turn waits for a decision (`approval.requested`):
 * the tool, its arguments (shortened), the approval's ID and the exact commands that decide it;
 * then (`approval.decided`) how it was decided. Undefined for every other event.
 * The arguments come from `GET /v1/approvals/{id}`; a caller who may not read the approval (the
 * inbox holds only approvals the caller may decide) gets the note without them.
 */
export async function approvalNote(client: OpenbotClient, event: ExecutionEvent): Promise<string | undefined> {
  const approvalId = typeof event.approvalId === 'string' ? event.approvalId : undefined;
  if (approvalId === undefined) return undefined;
  if (event.type === 'approval.decided') return `Approval ${approvalId} ${DECIDED[String(event.decision)] ?? String(event.decision)}.\n`;
  if (event.type !== 'approval.requested') return undefined;
  const args = await readArguments(client, approvalId);
  return [
    `Waiting for approval: the tool ${String(event.name)} wants to run${args === undefined ? '' : ` with ${shorten(args)}`}.`,
    `  approval: ${approvalId}`,
    `  approve:  openbot approvals approve ${approvalId}`,
    `  deny:     openbot approvals deny ${approvalId} --reason "<why>"`,
    '',
  ].join('\n');
}

async function readArguments(client: OpenbotClient, approvalId: string): Promise<string | undefined> {
  try {
    const approval: Approval = await unwrap(client.GET('/v1/approvals/{id}', { params: { path: { id: approvalId } } }));
    return approval.arguments;
  } catch (error) {
    if (error instanceof OpenbotApiError && !error.isServerFault) return undefined;
    throw error;
  }
}

function shorten(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > ARGUMENTS_SHOWN ? `${oneLine.slice(0, ARGUMENTS_SHOWN - 1)}…` : oneLine;
}
