import type { ToolCall } from '@openbot/core';
import { newId, type ErrorId } from '@openbot/domain';
import type { CallRequest, FailureRecorder, Json, PhaseEvents } from '@openbot/engine';
import { McpFailure, toFailure, toolDigest, type ListedTool, type McpConnection, type ToolDeclaration } from '@openbot/protocol';
import type { Pool } from 'pg';
import type { AppClient } from '../../apps/app-client';
import type { BotTool } from '../../bots/bot-view';
import { answer } from './http-tool';

/** What App calls need from the node. */
export interface AppToolDeps {
  readonly pool: Pool;
  readonly apps: AppClient;
  readonly failures: FailureRecorder;
  /** This node: the owner of the physical scopes its calls open (RES-07). */
  readonly nodeId: string;
  /** OPENBOT_APP_CALL_TIMEOUT, in milliseconds. */
  readonly callTimeoutMs: number;
}

/** The member whose work the call is, and where it runs. */
export interface AppCallContext {
  readonly organizationId: string;
  readonly memberId: string | null;
  readonly executionId: string;
  readonly step: number;
  readonly publisher: PhaseEvents;
}

/** A physical scope's lease: long enough for one call; the cleanup closes it once expired. */
const SCOPE_LEASE_SECONDS = 300;

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
 * `tool.progress` events. The connection is one physical scope of this node, recorded with its
 * lease and its close result.
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

  const refusal = await checkDeclaration(deps.pool, declaration, context);
  if (refusal !== null) return failed(deps, context, refusal, call.name);

  const target = await deps.apps.targetOf(deps.pool, declaration.connectionId);
  if (target === null) return failed(deps, context, new McpFailure('tool_changed', 'the connection was deleted'), call.name);
  let connection: McpConnection;
  try {
    connection = await deps.apps.open(target, { signal: request.signal });
  } catch (error) {
    return failed(deps, context, toFailure(error, 'open'), call.name);
  }
  const scopeId = await openScope(deps, context, declaration.connectionId, connection);
  try {
    const result = await connection.callTool(declaration, args as Record<string, unknown>, {
      signal: request.signal,
      timeoutMs: deps.callTimeoutMs,
      onProgress: (p) => context.publisher.publish('tool.progress', { callId: call.callId, ...p }, { step: context.step }),
    });
    return answer(result.isError ? `Error: ${result.text}` : result.text, result.isError);
  } catch (error) {
    const failure = toFailure(error, 'call');
    if (failure.resultLost) throw failure;
    // A refused call (invalid params, unknown tool): the server's tool is not what was saved.
    const changed = failure.reason === 'protocol_error' && [-32602, -32601].includes(jsonRpcCode(error));
    return failed(deps, context, changed ? new McpFailure('tool_changed', 'the server refused the saved declaration', { cause: failure }) : failure, call.name);
  } finally {
    await closeScope(deps.pool, scopeId, connection);
  }
}

/** Why a saved declaration may not be sent now, or null when it may. */
async function checkDeclaration(pool: Pool, declaration: ToolDeclaration, context: AppCallContext): Promise<McpFailure | null> {
  const { rows } = await pool.query<{ revision: number; owner: string; member_id: string | null }>({
    name: 'turn.app_connection',
    text: `SELECT revision, owner, member_id FROM app_connections WHERE id = $1 AND organization_id = $2 AND deleting_at IS NULL`,
    values: [declaration.connectionId, context.organizationId],
  });
  const connection = rows[0];
  if (connection === undefined) return new McpFailure('tool_changed', 'the connection was deleted');
  if (connection.owner === 'member' && connection.member_id !== context.memberId) return new McpFailure('refused', "the connection is another member's own");
  if (connection.revision === declaration.revision) return null;
  // A later revision: the saved declaration still holds only if that revision lists the same tool unchanged.
  const { rows: cached } = await pool.query<{ tools: unknown }>({
    name: 'turn.app_connection_tools',
    text: 'SELECT tools FROM app_connection_tools WHERE connection_id = $1 AND revision = $2',
    values: [declaration.connectionId, connection.revision],
  });
  const now = (cached[0]?.tools as ListedTool[] | undefined)?.find((t) => t.name === declaration.serverName);
  if (now !== undefined && toolDigest(now) === declaration.digest) return null;
  return new McpFailure('tool_changed', `the tool changed on its server since it was saved (connection revision ${declaration.revision} → ${connection.revision})`);
}

/** Records the failure (sealed cause, error ID) and answers the model with its category and ID. */
async function failed(deps: AppToolDeps, context: AppCallContext, failure: McpFailure, name: string): Promise<Json> {
  const errorId = newId<ErrorId>();
  await deps.failures.record(deps.pool, { errorId, category: failure.category, origin: `app-tool:${failure.reason}`, cause: failure, executionId: context.executionId });
  const why = failure.reason === 'tool_changed' ? `${failure.message}; save the Bot again to take the new declaration` : failure.message;
  return { ...(answer(`Error: the App tool "${name}" failed (category ${failure.category}, error ID ${errorId}): ${why}.`, true) as object), failure: { category: failure.category, errorId } };
}

async function openScope(deps: AppToolDeps, context: AppCallContext, connectionId: string, connection: McpConnection): Promise<string> {
  const id = newId();
  await deps.pool.query({
    name: 'turn.app_scope_open',
    text: `INSERT INTO app_connection_scopes (id, connection_id, node_id, execution_id, url, era, session_id, lease_until)
           VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
    values: [id, connectionId, deps.nodeId, context.executionId, connection.url, connection.era, connection.sessionId, SCOPE_LEASE_SECONDS],
  });
  return id;
}

/** Closes the scope and stores its close result (RES-06); a failed close keeps the scope open for the cleanup. */
async function closeScope(pool: Pool, scopeId: string, connection: McpConnection): Promise<void> {
  let result: Json;
  try {
    result = { ...(await connection.close()) } as Json;
  } catch {
    return;
  }
  await pool.query({ name: 'turn.app_scope_close', text: 'UPDATE app_connection_scopes SET closed_at = now(), close_result = $2 WHERE id = $1 AND close_result IS NULL', values: [scopeId, JSON.stringify(result)] });
}

function jsonRpcCode(error: unknown): number {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return 0;
}
