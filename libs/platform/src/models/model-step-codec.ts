import type { ChatMessage, ModelStepResult, ToolCall, Usage } from '@openbot/core';
import { codec, type Codec } from '@openbot/engine';

/**
 * How a model step is stored in the call log: a workflow declares its `model` call with
 * `modelStepResultCodec`, and ModelCalls saves and reuses the step through it (decision 019).
 */

export const toolCallCodec: Codec<ToolCall> = codec.object({ callId: codec.string, name: codec.string, arguments: codec.string });

export const chatMessageCodec: Codec<ChatMessage> = codec.object({
  role: codec.oneOf(['system', 'user', 'assistant', 'tool']),
  content: codec.string,
  toolCalls: codec.optional(codec.array(toolCallCodec)),
  toolCallId: codec.optional(codec.string),
});

const usageCodec: Codec<Usage> = codec.object({ inputTokens: codec.number, outputTokens: codec.number, cachedInputTokens: codec.optional(codec.number) });

/** A model step's saved result: reused as it is after a takeover (STC-05). */
export const modelStepResultCodec: Codec<ModelStepResult> = codec.object({
  message: chatMessageCodec,
  text: codec.string,
  toolCalls: codec.array(toolCallCodec),
  usage: codec.nullable(usageCodec),
  finishReason: codec.oneOf(['stop', 'tool_calls', 'length']),
});

