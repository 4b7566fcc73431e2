import type { ChatMessage, ToolCall, Usage } from '../model/chat';
import { ModelFailure, type FinishReason, type ModelProvider, type ModelRequest } from '../model/model-provider';

export interface ModelStepResult {
  /** The assistant message of this step: its text and the tool calls it asks for. */
  readonly message: ChatMessage;
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  /** `null` when the provider reported no usage: unknown, never counted as 0. */
  readonly usage: Usage | null;
  readonly finishReason: FinishReason;
}

/**
 * One model call: consumes a provider stream into an assistant message plus usage. It makes a
 * single attempt; a caller that retries calls it again and must drop this attempt's text (CALL-04).
 */
export async function runModelStep(
  provider: ModelProvider,
  request: ModelRequest,
  onText?: (text: string) => void | Promise<void>,
): Promise<ModelStepResult> {
  let text = '';
  const toolCalls: ToolCall[] = [];
  let usage: Usage | null = null;
  let finishReason: FinishReason | undefined;

  for await (const event of provider.stream(request)) {
    switch (event.type) {
      case 'text': {
        text += event.text;
        // Awaited only when it is async: a synchronous one costs no extra turn per token.
        const handled = onText?.(event.text);
        if (handled !== undefined) await handled;
        break;
      }
      case 'tool-call':
        toolCalls.push({ callId: event.callId, name: event.name, arguments: event.arguments });
        break;
      case 'usage':
        usage = {
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          ...(event.cachedInputTokens !== undefined ? { cachedInputTokens: event.cachedInputTokens } : {}),
        };
        break;
      case 'finish':
        finishReason = event.reason;
        break;
    }
  }
  // A stream that stops without a finish is a broken connection, whatever the adapter said.
  if (finishReason === undefined) throw new ModelFailure('unavailable', 'The model stream ended without a finish.');

  const message: ChatMessage = toolCalls.length > 0 ? { role: 'assistant', content: text, toolCalls } : { role: 'assistant', content: text };
  return { message, text, toolCalls, usage, finishReason };
}
