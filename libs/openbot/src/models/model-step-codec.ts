import type { ChatMessage, ModelStepResult, ToolCall, Usage } from '@openbot/core';
import { codec, type Codec } from '@openbot/engine';

/**
 * How a model step is stored in the call log (decision 019): a workflow declares its `model` call
 * with `modelStepCodec` and passes its phase context to ModelCalls as it is (decision 020).
 */

export const toolCallCodec: Codec<ToolCall> = codec.object({ callId: codec.string, name: codec.string, arguments: codec.string });

export const chatMessageCodec: Codec<ChatMessage> = codec.object({
  role: codec.oneOf(['system', 'user', 'assistant', 'tool']),
  content: codec.string,
  toolCalls: codec.optional(codec.array(toolCallCodec)),
  toolCallId: codec.optional(codec.string),
});

const usageCodec: Codec<Usage> = codec.object({ inputTokens: codec.number, outputTokens: codec.number });

/** A model step's saved result: reused as it is after a takeover (STC-05). */
export const modelStepCodec: Codec<ModelStepResult> = codec.object({
  message: chatMessageCodec,
  text: codec.string,
  toolCalls: codec.array(toolCallCodec),
  usage: codec.nullable(usageCodec),
  finishReason: codec.oneOf(['stop', 'tool_calls', 'length']),
});
