import type { TraceSpan } from '@openbot/engine';
import { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_TOOL_CALL_ID, ATTR_GEN_AI_TOOL_NAME, ATTR_GEN_AI_TOOL_TYPE } from '@opentelemetry/semantic-conventions/incubating';

/**
 * A tool call's span by the GenAI conventions (docs/decisions/040): `execute_tool <name>`, the
 * tool's name and call ID, and what serves it (an HTTP tool or an App's tool). Never the
 * arguments or the answer (the conventions' opt-in content attributes are never set).
 */
export function describeToolCall(span: TraceSpan, call: { readonly name: string; readonly callId: string; readonly servedBy: 'http' | 'app' }): void {
  span.rename(`execute_tool ${call.name}`);
  span.set({
    [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
    [ATTR_GEN_AI_TOOL_NAME]: call.name,
    [ATTR_GEN_AI_TOOL_CALL_ID]: call.callId,
    [ATTR_GEN_AI_TOOL_TYPE]: 'function',
    'openbot.tool.served_by': call.servedBy,
  });
}
