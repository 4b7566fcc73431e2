import type { ToolCall } from '@openbot/core';
import { isUuid, newId, type ErrorId, type InputIssue } from '@openbot/domain';
import type { CallRequest, FailureRecorder, Json, PhaseEvents } from '@openbot/engine';
import { isRepeatSafe, McpFailure, toFailure, toolDigest, type ListedTool, type ToolDeclaration } from '@openbot/protocol';
import type { Database, Sql } from '../../../platform/src/database/sql';
import { PhaseSessions, type AppSessions, type SessionKey } from './app-sessions';
import { mayUseConnection } from './app-view';
import type { SendActor } from '../../../platform/src/vaults/vault-secrets';
import { answer } from '../../../platform/src/turn-core/tool-answer';
import type { BotTool } from '../../../platform/src/turn-core/tool-spec';
import type { TurnTool } from '../../../platform/src/turn-core/turn-tool';

/** What App calls need from the node. */
export interface AppToolDeps {
  readonly db: Database;
  /** This node's open MCP sessions (physical scopes, RES-07). */
  readonly sessions: AppSessions;
  readonly failures: FailureRecorder;
  /** OPENBOT_APP_CALL_TIMEOUT, in milliseconds. */
  readonly callTimeoutMs: number;
}

/** The member whose work the call is, and where it runs. */
export interface AppCallContext {
  readonly organizationId: string;
  readonly memberId: string | null;
  /** Whose work the call is: Vault references of the connection are opened with its rights. */
  readonly actor: SendActor;
  /** The sessions this phase run holds: a call reuses the phase's session of its connection. */
  readonly sessions: PhaseSessions;
  readonly executionId: string;
  readonly step: number;
  readonly publisher: PhaseEvents;
}

/**
 * Sends one App tool call from its saved declaration (STC-12). It looks up only the connection
 * the declaration names and checks it: it must still exist, belong to the organization, be usable
 * by the Turn's member, and have the saved revision — or, at a later revision, list the same tool
 * with the same digest. Only then is `tools/call` sent with the saved server name; a tool that
 * changed fails the call clearly (`tool_changed`, with an error ID) and nothing is sent. It never
 * lists tools and never calls another tool.
 *
 * A lost answer is thrown as it is (McpFailure `answer_lost`, `resultLost`): the call log turns it
 * into outcome_unknown for an unsafe tool and repeats a safe one. Any other failure answers the
 * model with its category and error ID, so the Turn goes on. Progress notifications become
 * `tool.progress` events. The session is a physical scope of this node (AppSessions), shared by
 * the phase's calls and by later phases; a session that failed under a call is dropped, and the
 * next call opens a new one.
 */
export async function callAppTool(deps: AppToolDeps, tool: BotTool, call: ToolCall, request: CallRequest, context: AppCallContext): Promise<Json> {
  const declaration = tool.declaration!;
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return answer(`Error: the arguments for "${call.name}" are not valid JSON.`, true);
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return answer(`Error: the arguments for "${call.name}" must be a JSON object.`, true);

  const checked = await checkDeclaration(deps.db, declaration, context);
  if (checked instanceof McpFailure) return failed(deps, context, checked, call.name);

  const key: SessionKey = { connectionId: declaration.connectionId, revision: checked.revision, actor: context.actor };
  let use;
  try {
    use = await context.sessions.get(key, request.signal);
  } catch (error) {
    if ((error as { connectionGone?: unknown }).connectionGone === true) return failed(deps, context, new McpFailure('tool_changed', 'the connection was deleted'), call.name);
    return failed(deps, context, toFailure(error, 'open'), call.name);
  }
  try {
    const result = await use.connection.callTool(declaration, args as Record<string, unknown>, {
      signal: request.signal,
      timeoutMs: deps.callTimeoutMs,
      onProgress: (p) => context.publisher.publish('tool.progress', { callId: call.callId, ...p }, { step: context.step }),
    });
    return answer(result.isError ? `Error: ${result.text}` : result.text, result.isError);
  } catch (error) {
    const failure = toFailure(error, 'call');
    // A session that failed under the call takes no more calls: the next one opens a new session.
    if (failure.retryable || failure.reason === 'invalid_server' || failure.reason === 'needs_authorization') context.sessions.drop(key, use);
    if (failure.resultLost) throw failure;
    // A refused call (invalid params, unknown tool): the server's tool is not what was saved.
    const changed = failure.reason === 'protocol_error' && [-32602, -32601].includes(jsonRpcCode(error));
    return failed(deps, context, changed ? new McpFailure('tool_changed', 'the server refused the saved declaration', { cause: failure }) : failure, call.name);
  }
}

/** Why a saved declaration may not be sent now, or the connection's current revision when it may. */
export async function checkDeclaration(db: Sql, declaration: ToolDeclaration, context: Pick<AppCallContext, 'organizationId' | 'memberId'>): Promise<McpFailure | { revision: number }> {
  const connection = await db.one<{ revision: number; owner: string; member_id: string | null }>({
    name: 'turn.app_connection',
    text: `SELECT revision, owner, member_id FROM app_connections WHERE id = $1 AND organization_id = $2 AND deleting_at IS NULL`,
    values: [declaration.connectionId, context.organizationId],
  });
  if (connection === undefined) return new McpFailure('tool_changed', 'the connection was deleted');
  if (!mayUseConnection(connection, context.memberId)) return new McpFailure('refused', "the connection is another member's own");
  if (connection.revision === declaration.revision) return { revision: connection.revision };
  // A later revision: the saved declaration still holds only if that revision lists the same tool unchanged.
  const cached = await db.one<{ tools: unknown }>({
    name: 'turn.app_connection_tools',
    text: 'SELECT tools FROM app_connection_tools WHERE connection_id = $1 AND revision = $2',
    values: [declaration.connectionId, connection.revision],
  });
  const now = (cached?.tools as ListedTool[] | undefined)?.find((t) => t.name === declaration.serverName);
  if (now !== undefined && toolDigest(now) === declaration.digest) return { revision: connection.revision };
  return new McpFailure('tool_changed', `the tool changed on its server since it was saved (connection revision ${declaration.revision} → ${connection.revision})`);
}

/** Records the failure (sealed cause, error ID) and answers the model with its category and ID. */
async function failed(deps: AppToolDeps, context: AppCallContext, failure: McpFailure, name: string): Promise<Json> {
  const errorId = newId<ErrorId>();
  await deps.db.transaction((tx) => deps.failures.record(tx, { errorId, category: failure.category, origin: `app-tool:${failure.reason}`, cause: failure, executionId: context.executionId }));
  const why = failure.reason === 'tool_changed' ? `${failure.message}; save the Bot again to take the new declaration` : failure.message;
  return { ...(answer(`Error: the App tool "${name}" failed (category ${failure.category}, error ID ${errorId}): ${why}.`, true) as object), failure: { category: failure.category, errorId } };
}

function jsonRpcCode(error: unknown): number {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return 0;
}

/**
 * The `app` tool kind (decision 031, decision 078): the saved declaration, checked and sent once
 * per attempt; repeated only when its server says it is safe (STC-12). The calls of one phase
 * run share its MCP sessions, released with the phase's resources (RES-01).
 */
export function appTool(deps: AppToolDeps): TurnTool {
  return {
    kind: 'app',
    answers: 'send',
    servedBy: 'app',
    needsChild: false,
    validate: appToolIssues,
    repeatSafe: (tool) => isRepeatSafe(tool.declaration!.annotations),
    send: (tool, call, request, context) => {
      // A Turn's call and a View's call always say whose work they are (the connection's member boundary).
      if (context.actor === undefined) throw new Error(`the App call ${call.callId} names no actor`);
      return callAppTool(deps, tool, call, request, {
        organizationId: context.organizationId,
        memberId: context.actor.kind === 'member' ? context.actor.id : null,
        actor: context.actor,
        sessions: context.scope.get('app-sessions', () => new PhaseSessions(deps.sessions, context.resources, context.executionId)),
        executionId: context.executionId,
        step: context.step,
        publisher: context.publisher,
      });
    },
  };
}

/** An app entry of a Bot: no route of its own (its server's hints say what repeats), the connection it uses. */
function appToolIssues(tool: BotTool, index: number): InputIssue[] {
  const issues: InputIssue[] = [];
  if (tool.url !== undefined) issues.push({ path: `tools.${index}.url`, message: 'an app tool must not have a url' });
  if (tool.retry !== undefined) issues.push({ path: `tools.${index}.retry`, message: 'an app tool must not have retry: its repeat safety is its server hints (readOnlyHint, idempotentHint)' });
  if (tool.connectionId === undefined || !isUuid(tool.connectionId)) issues.push({ path: `tools.${index}.connectionId`, message: 'an app tool needs the connectionId of a connection of this organization' });
  return issues;
}
