import { codec, defineWorkflow, type Codec, type Json } from '@openbot/engine';
import { decodeDeclaration, McpFailure, visibilityOf, type ToolDeclaration } from '@openbot/protocol';
import type { Sql } from '../../../platform/src/database/sql';
import type { ToolCalls } from '../../../platform/src/tool-calls/tool-calls';
import { PhaseScope } from '../../../platform/src/turn-core/turn-tool';

interface ViewCallInput {
  readonly viewId: string;
  readonly organizationId: string;
  readonly memberId: string;
  /** The tool's name on its server, as the View calls it. */
  readonly name: string;
  /** The arguments as the View gave them (a JSON text). */
  readonly arguments: string;
}

interface ViewCallState {
  readonly input: ViewCallInput;
  readonly answer: Json | null;
}

const inputCodec: Codec<ViewCallInput> = codec.object({ viewId: codec.string, organizationId: codec.string, memberId: codec.string, name: codec.string, arguments: codec.string });

export const VIEW_CALL = defineWorkflow({
  name: 'app.view.call',
  audience: 'member',
  input: inputCodec,
  state: codec.object({ input: inputCodec, answer: codec.nullable(codec.json) }) satisfies Codec<ViewCallState>,
  result: codec.json,
  calls: { tool: codec.json },
});

/**
 * A tool call made from a View (MCP Apps), as a workflow of its own (FW-05). It goes through the
 * checks of a model's call: the View's saved declaration is found by its name only (STC-12), the
 * tool must be callable from a View (visibility `app`), then the declaration and the connection
 * revision are checked, the connection's member boundary and Vault rights apply, and the call is
 * sent once per attempt through the call log (a lost answer of an unsafe tool waits in
 * outcome_unknown; a `readOnlyHint`/`idempotentHint` tool is repeated). Its session is one of
 * this node's open sessions, held by the phase (RES-01). Its answer is the execution's result.
 * The call goes through ToolCalls like a Turn's (decision 078), announcing no `tool.*` event.
 */
export function viewCallWorkflow(deps: { readonly db: Sql; readonly toolCalls: ToolCalls }) {
  return VIEW_CALL.implement({
    initial: (input) => ({ input, answer: null }),
    next: (state) => (state.answer === null ? { phase: 'call' } : { end: 'completed', result: state.answer }),
    phases: {
      call: {
        async run(context) {
          const { input } = context.state;
          const declaration = await viewDeclaration(deps.db, input);
          if (declaration instanceof McpFailure) return { state: { ...context.state, answer: { modelOutput: `Error: ${declaration.message}.`, isError: true, failure: { category: declaration.category } } } };
          const tool = { name: declaration.serverName, description: declaration.description, parameters: declaration.inputSchema, kind: 'app' as const, connectionId: declaration.connectionId, declaration };
          const call = { callId: `view-${context.executionId}`, name: declaration.serverName, arguments: input.arguments };
          const callContext = {
            organizationId: input.organizationId,
            actor: { kind: 'member' as const, id: input.memberId },
            executionId: context.executionId,
            step: context.step,
            publisher: context.publisher,
            resources: context.resources,
            scope: new PhaseScope(),
            callLog: (_key: string, options: { readonly safe: boolean; readonly kind: 'tool' }, send: Parameters<typeof context.call>[2]) => context.call('tool', options, send),
          };
          const answer = await deps.toolCalls.send(callContext, tool, call, 'tool');
          return { state: { ...context.state, answer } };
        },
      },
    },
  });
}

/** The View's saved declaration of the called tool, found by name only; or why it may not be called. */
async function viewDeclaration(db: Sql, input: ViewCallInput): Promise<ToolDeclaration | McpFailure> {
  const view = await db.one<{ declarations: unknown[] }>({
    name: 'apps.view_declarations',
    text: 'SELECT declarations FROM app_views WHERE id = $1 AND organization_id = $2 AND member_id = $3',
    values: [input.viewId, input.organizationId, input.memberId],
  });
  if (view === undefined) return new McpFailure('tool_changed', 'the View is gone (its connection was deleted)');
  const found = view.declarations.map(decodeDeclaration).find((d) => d.serverName === input.name);
  if (found === undefined) return new McpFailure('tool_changed', `the View's connection has no tool "${input.name}"`);
  if (!visibilityOf(found).includes('app')) return new McpFailure('refused', `the tool "${input.name}" may not be called from a View`);
  return found;
}
