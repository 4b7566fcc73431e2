import { toolMessage, type ChatMessage, type ToolCall, type ToolDefinition, type ToolResult } from '../model/chat';

export interface ToolInvocation {
  /** The parsed JSON arguments the model sent. */
  readonly arguments: unknown;
  readonly callId: string;
  readonly signal?: AbortSignal;
}

/** What a local tool returns: the text the model will read (STC-09). */
export interface ToolOutput {
  readonly modelOutput: string;
}

export type ToolHandler = (invocation: ToolInvocation) => ToolOutput | Promise<ToolOutput>;

export interface LocalTool {
  readonly definition: ToolDefinition;
  readonly handler: ToolHandler;
}

export interface ToolStepResult {
  readonly results: readonly ToolResult[];
  /** One tool message per call, in call order; each `content` is the result's `modelOutput`. */
  readonly messages: readonly ChatMessage[];
}

export interface ToolStepHooks {
  readonly signal?: AbortSignal;
  readonly onCall?: (call: ToolCall) => void | Promise<void>;
  /** Runs after each result exists and before the next call starts, so a host can save it first (STC-06). */
  readonly onResult?: (result: ToolResult) => void | Promise<void>;
}

/**
 * Runs the local handlers for one step's tool calls, one after another in the model's order.
 * A bad call (unknown tool, arguments that are not JSON, a handler that throws) becomes an error
 * result the model can read and react to; it does not end the Turn.
 */
export async function runToolStep(
  calls: readonly ToolCall[],
  tools: readonly LocalTool[],
  hooks: ToolStepHooks = {},
): Promise<ToolStepResult> {
  const byName = new Map(tools.map((tool) => [tool.definition.name, tool]));
  const results: ToolResult[] = [];
  for (const call of calls) {
    hooks.signal?.throwIfAborted();
    await hooks.onCall?.(call);
    const result = await runOne(call, byName.get(call.name), hooks.signal);
    results.push(result);
    await hooks.onResult?.(result);
  }
  return { results, messages: results.map(toolMessage) };
}

async function runOne(call: ToolCall, tool: LocalTool | undefined, signal: AbortSignal | undefined): Promise<ToolResult> {
  const failed = (modelOutput: string): ToolResult => ({ callId: call.callId, name: call.name, modelOutput, isError: true });
  if (!tool) return failed(`Error: there is no tool named "${call.name}".`);
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return failed(`Error: the arguments for "${call.name}" are not valid JSON.`);
  }
  try {
    const output = await tool.handler({ arguments: args, callId: call.callId, signal });
    return { callId: call.callId, name: call.name, modelOutput: output.modelOutput, isError: false };
  } catch (error) {
    // A cancelled Turn stops here instead of reporting the abort to the model.
    signal?.throwIfAborted();
    return failed(`Error: the tool "${call.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
