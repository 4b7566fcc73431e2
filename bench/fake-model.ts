import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The scripted OpenAI-compatible model server of the `turn` workload (docs/benchmarks.md): every
 * chat-completions request gets the same fixed reply of `tokens` tokens (one short word per
 * chunk), the first after `firstTokenDelayMs`, then one every `tokenIntervalMs`, on an absolute
 * schedule from the request's arrival (timer drift does not add up over the reply). It records,
 * per request, when it sent the first token and its last byte, keyed by the content of the last
 * user message of the prompt (the benchmark puts a unique marker there).
 *
 * Wire format as test/fakes/fake-openai-server.ts: SSE `data: {chunk}` lines, a final chunk with
 * finish_reason `stop`, a usage chunk with empty `choices`, then `data: [DONE]`.
 */
export interface ModelTiming {
  /** The last user message's content (the benchmark's Turn marker). */
  readonly key: string;
  readonly idempotencyKey: string | null;
  /** Epoch ms (fractional): request fully received. */
  readonly receivedAt: number;
  /** Epoch ms: right before the chunk with the first token was written. */
  firstTokenAt: number;
  /** Epoch ms: once the last byte (`[DONE]` and the response end) was handed to the socket. */
  lastByteAt: number;
  /** The stream was not finished (the client went away, or the write failed). */
  aborted: boolean;
}

export interface FakeModelOptions {
  readonly tokens?: number;
  readonly firstTokenDelayMs?: number;
  readonly tokenIntervalMs?: number;
  /** Streams wait for this (after their headers) before their first token's delay starts: a workload that starts every stream at once. */
  readonly gate?: Promise<void>;
}

/** Wall-clock time in ms with sub-ms precision, comparable across this process. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

const WORDS = ['alpha', 'bravo', 'delta', 'echo', 'gamma', 'kilo', 'lima', 'mike', 'nova', 'oscar', 'papa', 'romeo', 'sierra', 'tango', 'zulu'];

export class FakeModelServer {
  /** Every request, in arrival order. */
  readonly timings: ModelTiming[] = [];
  readonly tokens: readonly string[];
  readonly reply: string;
  private readonly firstTokenDelayMs: number;
  private readonly tokenIntervalMs: number;
  private readonly gate: Promise<void> | undefined;
  private readonly server: Server = createServer((req, res) => {
    this.handle(req, res).catch(() => res.destroy());
  });

  private constructor(options: FakeModelOptions) {
    const count = options.tokens ?? 200;
    this.tokens = Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${WORDS[i % WORDS.length]!}`);
    this.reply = this.tokens.join('');
    this.firstTokenDelayMs = options.firstTokenDelayMs ?? 50;
    this.tokenIntervalMs = options.tokenIntervalMs ?? 5;
    this.gate = options.gate;
  }

  static async start(options: FakeModelOptions = {}): Promise<FakeModelServer> {
    const fake = new FakeModelServer(options);
    fake.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The timing of the request whose last user message is `key` (the latest such request). */
  timingFor(key: string): ModelTiming | undefined {
    for (let i = this.timings.length - 1; i >= 0; i--) if (this.timings[i]!.key === key) return this.timings[i];
    return undefined;
  }

  requestsFor(key: string): number {
    return this.timings.filter((t) => t.key === key).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const receivedAt = nowMs();
    if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { messages?: Array<{ role?: string; content?: unknown }> };
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
    const idempotencyKey = req.headers['idempotency-key'];
    const timing: ModelTiming = {
      key: typeof lastUser?.content === 'string' ? lastUser.content : '',
      idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : null,
      receivedAt,
      firstTokenAt: Number.NaN,
      lastByteAt: Number.NaN,
      aborted: true,
    };
    this.timings.push(timing);
    let closed = false;
    res.on('close', () => (closed = true));
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    res.flushHeaders();
    if (this.gate !== undefined) await this.gate;
    const startedAt = this.gate === undefined ? receivedAt : nowMs();
    for (let i = 0; i < this.tokens.length; i++) {
      await sleepUntil(startedAt + this.firstTokenDelayMs + i * this.tokenIntervalMs);
      if (closed) return;
      const text = data(chunk({ content: this.tokens[i]! }));
      if (i === 0) {
        timing.firstTokenAt = nowMs();
        res.write(data(chunk({ role: 'assistant', content: '' })) + text);
      } else {
        res.write(text);
      }
    }
    if (closed) return;
    const tail = data(chunk({}, 'stop')) + data(usageChunk(body.messages?.length ?? 0, this.tokens.length)) + 'data: [DONE]\n\n';
    await new Promise<void>((resolve) => res.end(tail, () => resolve()));
    timing.lastByteAt = nowMs();
    timing.aborted = false;
  }
}

async function sleepUntil(at: number): Promise<void> {
  const wait = at - nowMs();
  if (wait > 0.5) await new Promise((resolve) => setTimeout(resolve, Math.round(wait)));
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-bench', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function usageChunk(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-bench',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}
