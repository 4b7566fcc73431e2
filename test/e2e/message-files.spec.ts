import { randomBytes } from 'node:crypto';
import { FakeAnthropicServer, textReply as anthropicText, toolUseReply } from '../fakes/fake-anthropic-server';
import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { bearer, createChatFixture, eventsUntilEnd, type Admission, type ChatFixture } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n');
const PARAMS = { type: 'object', properties: {} };

type Part = { type: string; text?: string; image_url?: { url: string }; source?: { media_type: string; data: string } };

/**
 * Files on messages and in tool results (issue 16, decision 036), through HTTP against the fake
 * model servers: what the provider request really carries, what is refused and where.
 */
describe('files on messages', () => {
  let t: TestApp;
  let openai: FakeOpenAiServer;
  let anthropic: FakeAnthropicServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
    openai = await FakeOpenAiServer.start();
    anthropic = await FakeAnthropicServer.start();
    tools = await FakeToolServer.start();
  });
  afterAll(async () => {
    await Promise.all([openai?.close(), anthropic?.close(), tools?.close()]);
    await t?.close();
  });

  const upload = async (secret: string, bytes: Buffer, filename: string, contentType: string): Promise<string> =>
    ((await t.http().post('/v1/files').set('authorization', bearer(secret)).attach('file', bytes, { filename, contentType }).expect(201)).body as { id: string }).id;

  const post = (chat: ChatFixture, body: Record<string, unknown>) => t.http().post(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).send(body);

  const run = async (chat: ChatFixture, body: Record<string, unknown>): Promise<void> => {
    const res = await post(chat, body).expect(202);
    const events = await eventsUntilEnd(t, chat.secret, (res.body as Admission).executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
  };

  /** The user messages of the last request a fake OpenAI server received. */
  const lastUserContent = (fake: { requests: Array<{ body: { messages: Array<{ role: string; content: unknown }> } }> }, index = -1) =>
    fake.requests.at(index)!.body.messages.filter((m) => m.role === 'user').map((m) => m.content);

  it('a message with fileIds reaches an OpenAI-compatible model as text and image parts, with empty content; the message lists them', async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const image = await upload(chat.secret, PNG, 'chart.png', 'image/png');
    const notes = await upload(chat.secret, Buffer.from('The launch is on Tuesday.'), 'notes.txt', 'text/plain');
    openai.enqueue(textReply(['Seen.']));
    await run(chat, { content: '', fileIds: [notes, image] });

    expect(lastUserContent(openai)).toEqual([
      [
        { type: 'text', text: 'File "notes.txt":\nThe launch is on Tuesday.' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      ],
    ]);
    const messages = (await t.http().get(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: Array<{ role: string; content: string; fileIds: string[] }> };
    expect(messages.data.map((m) => [m.role, m.content, m.fileIds])).toEqual([
      ['user', '', [notes, image]],
      ['assistant', 'Seen.', []],
    ]);
  });

  it("[USE-02] a call's reservation counts its files: a 40,000-byte text file adds about 10,000 tokens to the estimate", async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const big = await upload(chat.secret, Buffer.from('word '.repeat(8_000)), 'big.txt', 'text/plain');
    const estimateOf = async (body: Record<string, unknown>): Promise<number> => {
      openai.enqueue(textReply(['ok']));
      const res = await post(chat, body).expect(202);
      await eventsUntilEnd(t, chat.secret, (res.body as Admission).executionId);
      const [hold] = await t.database.query<{ estimated: number }>('SELECT estimated_input_tokens AS estimated FROM usage_holds WHERE execution_id = $1', [(res.body as Admission).executionId]);
      return hold!.estimated;
    };
    const without = await estimateOf({ content: 'short' });
    const withFile = await estimateOf({ content: 'short', fileIds: [big] });
    // The second prompt also carries the first exchange (a few tokens); the file is the rest.
    expect(withFile - without).toBeGreaterThanOrEqual(10_000);
    expect(withFile - without).toBeLessThan(10_100);
  });

  it('a PDF reaches an Anthropic model as a document block', async () => {
    const chat = await createChatFixture(t, { baseUrl: anthropic.baseUrl, kind: 'anthropic' });
    const pdf = await upload(chat.secret, PDF, 'report.pdf', 'application/pdf');
    anthropic.enqueue(anthropicText(['Read it.']));
    await run(chat, { content: 'Summarize', fileIds: [pdf] });
    const body = anthropic.requests.at(-1)!.body as { messages: Array<{ role: string; content: Part[] }> };
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Summarize' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF.toString('base64') }, title: 'report.pdf' }],
    });
  });

  it("refuses what the Bot's provider cannot take, another organization's file and an unknown one, each on fileIds.N; blank content needs files", async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const other = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const pdf = await upload(chat.secret, PDF, 'report.pdf', 'application/pdf');
    const binary = await upload(chat.secret, randomBytes(32), 'blob.bin', 'application/octet-stream');
    const foreign = await upload(other.secret, Buffer.from('theirs'), 'theirs.txt', 'text/plain');
    const mine = await upload(chat.secret, Buffer.from('mine'), 'mine.txt', 'text/plain');
    const requestsBefore = openai.requests.length;

    const refused = await post(chat, { content: 'look', fileIds: [mine, pdf, foreign, '0190c3f0-1234-7abc-8def-0123456789ab', binary, 'not-a-uuid'] }).expect(400);
    expect(refused.body).toMatchObject({ type: 'InvalidInput' });
    const paths = (refused.body as { issues?: Array<{ path: string }>; errors?: Array<{ path: string }> });
    const named = (paths.issues ?? paths.errors ?? []).map((issue) => issue.path).sort();
    expect(named).toEqual(['fileIds.1', 'fileIds.2', 'fileIds.3', 'fileIds.4', 'fileIds.5']);
    expect(JSON.stringify(refused.body)).not.toContain('fileIds.0');

    const blank = await post(chat, { content: '   ' }).expect(400);
    expect(JSON.stringify(blank.body)).toContain('content');
    // Nothing was admitted: no Turn asked the model anything.
    expect(openai.requests.length).toBe(requestsBefore);
    const messages = (await t.http().get(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: unknown[] };
    expect(messages.data).toEqual([]);
  });

  it('a file deleted later reaches later Turns as a short text that says so', async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl });
    const image = await upload(chat.secret, PNG, 'chart.png', 'image/png');
    openai.enqueue(textReply(['A chart.']));
    await run(chat, { content: 'What is this?', fileIds: [image] });
    const deleted = await t.http().delete(`/v1/files/${image}`).set('authorization', bearer(chat.secret)).expect(202);
    await eventsUntilEnd(t, chat.secret, (deleted.body as { executionId: string }).executionId);

    openai.enqueue(textReply(['It is gone.']));
    await run(chat, { content: 'And now?' });
    expect(lastUserContent(openai)).toEqual([
      [
        { type: 'text', text: 'What is this?' },
        { type: 'text', text: `File "file ${image}":\nThis file was deleted; its content is no longer available.` },
      ],
      'And now?',
    ]);
    expect(JSON.stringify(openai.requests.at(-1)!.body)).not.toContain(PNG.toString('base64'));
  });

  it('[STC-09] a tool result carries files in its modelOutput: the model gets them with the tool message, and later Turns replay them', async () => {
    const chat = await createChatFixture(t, { baseUrl: openai.baseUrl, tools: [{ name: 'plot', description: 'Plots', parameters: PARAMS, kind: 'http', url: tools.url('/plot') }] });
    const image = await upload(chat.secret, PNG, 'plot.png', 'image/png');
    const data = await upload(chat.secret, Buffer.from('x,y\n1,2\n'), 'data.csv', 'text/csv');
    tools.enqueue(jsonReply(200, { modelOutput: 'Here is the plot.', fileIds: [image, data] }));
    openai.enqueue(toolCallReply('call_plot', 'plot', ['{}']), textReply(['Plotted.']));
    await run(chat, { content: 'Plot it' });

    // The step after the tool: the text file joins the tool message, the image follows in a user message.
    const afterTool = openai.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> };
    expect(afterTool.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_plot', content: 'Here is the plot.\n\nFile "data.csv":\nx,y\n1,2\n' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images from tool call call_plot:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
        ],
      },
    ]);
    const listed = (await t.http().get(`/v1/chats/${chat.chatId}/messages`).set('authorization', bearer(chat.secret)).expect(200)).body as { data: Array<{ role: string; fileIds: string[] }> };
    expect(listed.data.find((m) => m.role === 'tool')?.fileIds).toEqual([image, data]);
    openai.enqueue(textReply(['Still there.']));
    await run(chat, { content: 'Again?' });
    const replay = openai.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(replay.messages)).toContain(`data:image/png;base64,${PNG.toString('base64')}`);
  });

  it('[STC-09] a client tool output may carry files: an Anthropic model gets them inside its tool_result', async () => {
    const chat = await createChatFixture(t, { baseUrl: anthropic.baseUrl, kind: 'anthropic', tools: [{ name: 'screenshot', description: 'Takes a screenshot', parameters: PARAMS, kind: 'client' }] });
    const image = await upload(chat.secret, PNG, 'screen.png', 'image/png');
    anthropic.enqueue(toolUseReply('toolu_1', 'screenshot', ['{}']), anthropicText(['Nice screen.']));
    const admitted = (await post(chat, { content: 'Show me' }).expect(202)).body as Admission;
    for (let i = 0; ; i++) {
      const res = await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'toolu_1', output: 'the screen', fileIds: [image] });
      if (res.status === 202) break;
      expect(res.status).toBe(404);
      if (i > 200) throw new Error('the client tool call never appeared');
      await new Promise((r) => setTimeout(r, 50));
    }
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ state: 'completed' });
    const body = anthropic.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: [{ type: 'text', text: 'the screen' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } }],
        },
      ],
    });
    const unknown = await t.http().post(`/v1/chats/${chat.chatId}/tool-outputs`).set('authorization', bearer(chat.secret)).send({ callId: 'toolu_1', output: 'x', fileIds: ['0190c3f0-1234-7abc-8def-0123456789ab'] }).expect(400);
    expect(JSON.stringify(unknown.body)).toContain('fileIds.0');
  });
});
