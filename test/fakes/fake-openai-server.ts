import type { ServerResponse } from 'node:http';
import { jsonBody, ScriptedServer, writeEventStream, type ListenAt, type Reply, type StreamOptions as BaseStreamOptions } from './scripted-server';

export { rawReply, silentReply, type RecordedRequest, type Reply } from './scripted-server';

/**
 * A scripted OpenAI-compatible model server for libs/core tests: a real HTTP server on
 * 127.0.0.1 speaking the chat-completions streaming wire format (SSE `data:` chunks, a usage chunk
 * with empty `choices`, `data: [DONE]`). Each request takes the next scripted reply, or the
 * `fallback` reply once the script is empty (see `ScriptedServer`).
 */
export class FakeOpenAiServer extends ScriptedServer {
  private constructor() {
    super({
      name: 'FakeOpenAiServer',
      baseUrlSuffix: '/v1',
      parseBody: jsonBody,
      unscripted: statusReply(500, { error: { message: 'no scripted reply' } }),
    });
  }

  static start(at?: ListenAt): Promise<FakeOpenAiServer> {
    return new FakeOpenAiServer().listen(at);
  }
}

// ---- chunk builders (the OpenAI `chat.completion.chunk` shape) -------------------------------

type Chunk = Record<string, unknown>;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Chunk {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

export const chunks = {
  role: (): Chunk => chunk({ role: 'assistant', content: '' }),
  text: (text: string): Chunk => chunk({ content: text }),
  /** The first fragment of a tool call carries id and name; later ones only argument text. */
  toolCallStart: (index: number, id: string, name: string): Chunk =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
  toolCallArgs: (index: number, fragment: string): Chunk => chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
  finish: (reason: 'stop' | 'tool_calls' | 'length'): Chunk => chunk({}, reason),
  usage: (promptTokens: number, completionTokens: number): Chunk => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-test',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  }),
};

// ---- replies ---------------------------------------------------------------------------------

export interface StreamOptions extends BaseStreamOptions {
  /** Leave out the final `data: [DONE]`. */
  readonly noDone?: boolean;
}

export interface HeldStreamOptions extends StreamOptions {
  /** Write this many chunks, then hold the stream open until `release` settles. */
  readonly holdAfter: number;
  /** Resolving it streams the rest; rejecting it drops the connection. */
  readonly release: Promise<void>;
}

export function streamReply(items: readonly Chunk[], options: StreamOptions = {}): Reply {
  return (res) => writeStream(res, items, options);
}

/**
 * Streams the chunks before index `holdAfter`, then waits for `release` before streaming the rest
 * (holds a stream open mid-way, e.g. while a test kills the process consuming it).
 */
export function heldStreamReply(items: readonly Chunk[], options: HeldStreamOptions): Reply {
  return (res) => writeStream(res, items, options);
}

function writeStream(res: ServerResponse, items: readonly Chunk[], options: StreamOptions & Partial<HeldStreamOptions>): Promise<void> {
  const frames = items.map((item) => `data: ${JSON.stringify(item)}\n\n`);
  return writeEventStream(res, frames, { ...options, trailer: options.noDone ? undefined : 'data: [DONE]\n\n' });
}

/** A complete text answer streamed in the given parts. */
export function textReply(parts: readonly string[], usage?: readonly [number, number], options: StreamOptions = {}): Reply {
  return streamReply(
    [chunks.role(), ...parts.map(chunks.text), chunks.finish('stop'), ...(usage ? [chunks.usage(usage[0], usage[1])] : [])],
    options,
  );
}

/** One tool call whose JSON arguments are split into fragments across chunks. */
export function toolCallReply(
  id: string,
  name: string,
  argumentFragments: readonly string[],
  usage?: readonly [number, number],
  options: StreamOptions = {},
): Reply {
  return streamReply(
    [
      chunks.role(),
      chunks.toolCallStart(0, id, name),
      ...argumentFragments.map((fragment) => chunks.toolCallArgs(0, fragment)),
      chunks.finish('tool_calls'),
      ...(usage ? [chunks.usage(usage[0], usage[1])] : []),
    ],
    options,
  );
}

export function statusReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
}

