import { jsonBody, ScriptedServer, writeEventStream, type Reply, type StreamOptions } from './scripted-server';

export { rawReply, silentReply, type RecordedRequest, type Reply, type StreamOptions } from './scripted-server';

/**
 * A scripted Anthropic Messages API server for libs/core tests: a real HTTP server on 127.0.0.1
 * speaking the Messages streaming wire format (SSE with `event:` and `data:` lines: message_start,
 * content_block_start/delta/stop, message_delta, message_stop, ping, error). Each request takes
 * the next scripted reply, or the `fallback` reply once the script is empty (see `ScriptedServer`).
 */
export class FakeAnthropicServer extends ScriptedServer {
  private constructor() {
    super({
      name: 'FakeAnthropicServer',
      baseUrlSuffix: '/v1',
      parseBody: jsonBody,
      unscripted: statusReply(500, 'api_error', 'no scripted reply'),
    });
  }

  static start(): Promise<FakeAnthropicServer> {
    return new FakeAnthropicServer().listen();
  }
}

// ---- event builders (the Messages API stream shape) -------------------------------------------

export interface StreamEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

export const events = {
  messageStart: (inputTokens?: number): StreamEvent => ({
    type: 'message_start',
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(inputTokens === undefined ? {} : { usage: { input_tokens: inputTokens, output_tokens: 1 } }),
    },
  }),
  textStart: (index: number): StreamEvent => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  text: (index: number, text: string): StreamEvent => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  toolStart: (index: number, id: string, name: string): StreamEvent => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name, input: {} },
  }),
  toolJson: (index: number, partialJson: string): StreamEvent => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  }),
  blockStop: (index: number): StreamEvent => ({ type: 'content_block_stop', index }),
  messageDelta: (stopReason: string, outputTokens?: number): StreamEvent => ({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    ...(outputTokens === undefined ? {} : { usage: { output_tokens: outputTokens } }),
  }),
  messageStop: (): StreamEvent => ({ type: 'message_stop' }),
  ping: (): StreamEvent => ({ type: 'ping' }),
  error: (type: string, message: string): StreamEvent => ({ type: 'error', error: { type, message } }),
};

/** One SSE event exactly as the API writes it. */
export function sse(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

// ---- replies ---------------------------------------------------------------------------------

export function streamReply(items: readonly StreamEvent[], options: StreamOptions = {}): Reply {
  return (res) => writeEventStream(res, items.map(sse), options);
}

/** A complete text answer streamed in the given parts, with usage when given. */
export function textReply(parts: readonly string[], usage?: readonly [number, number], options: StreamOptions = {}): Reply {
  return streamReply(
    [
      events.messageStart(usage?.[0]),
      events.textStart(0),
      events.ping(),
      ...parts.map((part) => events.text(0, part)),
      events.blockStop(0),
      events.messageDelta('end_turn', usage?.[1]),
      events.messageStop(),
    ],
    options,
  );
}

/** One tool_use block whose JSON input is split into fragments across events. */
export function toolUseReply(
  id: string,
  name: string,
  jsonFragments: readonly string[],
  usage?: readonly [number, number],
  options: StreamOptions = {},
): Reply {
  return streamReply(
    [
      events.messageStart(usage?.[0]),
      events.toolStart(0, id, name),
      ...jsonFragments.map((fragment) => events.toolJson(0, fragment)),
      events.blockStop(0),
      events.messageDelta('tool_use', usage?.[1]),
      events.messageStop(),
    ],
    options,
  );
}

/** An HTTP error in the Messages API error shape. */
export function statusReply(status: number, errorType: string, message: string, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify({ type: 'error', error: { type: errorType, message } }));
  };
}

