import type { ServerResponse } from 'node:http';
import { FakeAnthropicServer } from '../../../../test/fakes/fake-anthropic-server';
import { FakeOpenAiServer } from '../../../../test/fakes/fake-openai-server';
import { failureOf as failureOfStream } from '../../../../test/support/model-streams';
import type { ModelFailure, ModelProvider } from '../model/model-provider';
import { AnthropicProvider } from './anthropic';
import { OpenAiCompatibleProvider } from './openai-compatible';

/** A 500 whose JSON error body never ends (streamed, no Content-Length). */
function endlessErrorBody(res: ServerResponse): void {
  res.writeHead(500, { 'content-type': 'application/json' });
  res.write('{"error":{"message":"');
  const chunk = 'x'.repeat(16 * 1024);
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

/** A 200 event stream whose first `data:` line never ends. */
function endlessSseLine(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('data: {"choices":[{"delta":{"content":"');
  const chunk = 'y'.repeat(16 * 1024);
  const pump = (): void => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

/** The failure a one-message request ends with; nothing comes before it. */
async function failureOf(provider: ModelProvider): Promise<ModelFailure> {
  const { failure, before } = await failureOfStream(provider.stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [] }));
  expect(before).toEqual([]);
  return failure;
}

describe.each([
  ['openai-compatible', () => FakeOpenAiServer.start(), (baseUrl: string, maxErrorBodyBytes?: number) => new OpenAiCompatibleProvider({ baseUrl, maxErrorBodyBytes })],
  ['anthropic', () => FakeAnthropicServer.start(), (baseUrl: string, maxErrorBodyBytes?: number) => new AnthropicProvider({ baseUrl, maxErrorBodyBytes })],
] as const)('%s adapter: bounded reads from the provider', (_kind, start, adapter) => {
  let server: FakeOpenAiServer | FakeAnthropicServer;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(() => server.close());

  it('security: an endless error body is read only up to the cap (64 KiB by default); the failure keeps its category and says why there are no details', async () => {
    server.enqueue(endlessErrorBody);
    const failure = await failureOf(adapter(server.baseUrl));
    expect(failure.category).toBe('unavailable');
    expect(failure.message).toBe('Model provider error 500: the error body is larger than 65536 bytes');
  });

  it('the error body cap is the adapter option maxErrorBodyBytes', async () => {
    server.enqueue((res) => void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'z'.repeat(5000) } })));
    expect((await failureOf(adapter(server.baseUrl, 4096))).message).toBe('Model provider error 400: the error body is larger than 4096 bytes');
  });

  it('security: a stream line that never ends fails as unavailable once it passes the line cap', async () => {
    server.enqueue(endlessSseLine);
    const failure = await failureOf(adapter(server.baseUrl));
    expect(failure.category).toBe('unavailable');
    expect(failure.message).toContain('a line longer than 1048576 characters');
  });
});
