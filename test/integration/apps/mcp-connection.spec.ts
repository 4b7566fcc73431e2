import { cappedFetch, checkToolList, declare, McpConnection, McpFailure, modelToolName, type ToolDeclaration } from '@openbot/protocol';
import { startSdkServer, startServerEverything, type RunningMcpServer, type RunningSdkServer } from '../../fakes/mcp-test-servers';

const LIMIT = 1024 * 1024;
const open = (url: string, extra: Partial<Parameters<typeof McpConnection.open>[0]> = {}): Promise<McpConnection> => McpConnection.open({ url, fetch, answerLimitBytes: LIMIT, ...extra });

async function declarationOf(connection: McpConnection, name: string): Promise<ToolDeclaration> {
  const { tools } = await connection.listTools();
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return declare(tool, { id: '0190a8e2-0000-7000-8000-00000000abcd', revision: 1 }, modelToolName('0190a8e2-0000-7000-8000-00000000abcd', name, new Set()));
}

describe('libs/protocol against real MCP servers', () => {
  describe('server-everything (legacy Streamable HTTP, sessions)', () => {
    let server: RunningMcpServer;
    beforeAll(async () => {
      server = await startServerEverything();
    });
    afterAll(async () => server.close());

    it('[STC-12] opens with initialize and a session, lists tools only when asked, calls echo and get-sum, and DELETEs the session at close', async () => {
      const connection = await open(server.url);
      expect(connection.era).toBe('legacy');
      expect(connection.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const declarations = await Promise.all(['echo', 'get-sum'].map((name) => declarationOf(connection, name)));
      expect(declarations[1]!.annotations.readOnlyHint).toBe(true);
      await expect(connection.callTool(declarations[0]!, { message: 'hello' })).resolves.toEqual({ isError: false, text: 'Echo: hello' });
      await expect(connection.callTool(declarations[1]!, { a: 2, b: 3 })).resolves.toEqual({ isError: false, text: 'The sum of 2 and 3 is 5.' });
      const sessionId = connection.sessionId!;
      await expect(connection.close()).resolves.toEqual({ kind: 'deleted', sessionId });
    });

    it('[STC-12] a saved declaration is sent without listing tools again', async () => {
      const first = await open(server.url);
      const saved = await declarationOf(first, 'echo');
      await first.close();
      const second = await open(server.url);
      await expect(second.callTool(saved, { message: 'again' })).resolves.toMatchObject({ text: 'Echo: again' });
      await second.close();
    });
  });

  describe('SDK McpServer', () => {
    let server: RunningSdkServer;
    let release: () => void = () => undefined;
    afterEach(async () => {
      release();
      await server?.close();
    });

    const tools = () => [
      { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, handler: async (args: Record<string, unknown>) => ({ text: String(Number(args.a) + Number(args.b)) }) },
      {
        name: 'hang',
        inputSchema: { type: 'object' },
        handler: () => new Promise<{ text: string }>((resolve) => (release = () => resolve({ text: 'late' }))),
      },
      {
        name: 'slow',
        inputSchema: { type: 'object' },
        handler: async (_args: Record<string, unknown>, extra: { sendProgress: (p: number, t?: number, m?: string) => Promise<void> }) => {
          await extra.sendProgress(1, 2, 'half');
          await extra.sendProgress(2, 2, 'done');
          return { text: 'slow done' };
        },
      },
    ];

    it('speaks the stateless 2026-07-28 revision: server/discover, no session, nothing to DELETE', async () => {
      server = await startSdkServer({ era: 'modern', tools });
      const connection = await open(server.url);
      expect(connection.era).toBe('modern');
      expect(connection.protocolVersion).toBe('2026-07-28');
      expect(connection.sessionId).toBeNull();
      const add = await declarationOf(connection, 'add');
      await expect(connection.callTool(add, { a: 20, b: 22 })).resolves.toEqual({ isError: false, text: '42' });
      await expect(connection.close()).resolves.toEqual({ kind: 'local' });
      expect(server.requests.map((r) => r.rpc)).toContain('server/discover');
      expect(server.requests.some((r) => r.rpc === 'initialize')).toBe(false);
      expect(server.requests.some((r) => r.method === 'DELETE')).toBe(false);
    });

    it('[STC-12] opening reads no capability list (only the handshake goes out)', async () => {
      server = await startSdkServer({ era: 'modern', tools });
      const connection = await open(server.url);
      expect(server.requests.map((r) => r.rpc).filter((m) => m !== null && m.startsWith('tools/'))).toEqual([]);
      await connection.close();
    });

    it('[RES-07] a legacy SDK session is ended with DELETE; a session the server forgot counts as closed (404)', async () => {
      server = await startSdkServer({ era: 'legacy', tools });
      const connection = await open(server.url, { era: 'legacy' });
      expect(connection.sessionId).not.toBeNull();
      expect(server.openSessions()).toBe(1);
      await expect(connection.close()).resolves.toMatchObject({ kind: 'deleted' });
      expect(server.openSessions()).toBe(0);
      expect(server.requests.at(-1)).toMatchObject({ method: 'DELETE' });

      const forgotten = await open(server.url, { era: 'legacy' });
      await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': forgotten.sessionId!, 'mcp-protocol-version': forgotten.protocolVersion! } });
      await expect(forgotten.close()).resolves.toMatchObject({ kind: 'already_closed', status: 404 });
    });

    it('a legacy server that lost the session (404) gets a new initialize, and the call is sent once on the new session', async () => {
      server = await startSdkServer({ era: 'legacy', tools });
      const connection = await open(server.url, { era: 'legacy' });
      const add = await declarationOf(connection, 'add');
      const first = connection.sessionId!;
      // The server forgets the session (as after a restart).
      await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': first, 'mcp-protocol-version': connection.protocolVersion! } });
      await expect(connection.callTool(add, { a: 1, b: 2 })).resolves.toMatchObject({ text: '3' });
      expect(connection.sessionId).not.toBe(first);
      expect(server.requests.filter((r) => r.rpc === 'tools/call').map((r) => r.sessionId)).toEqual([first, connection.sessionId]);
      await connection.close();
    });

    it('a call never answered fails as a lost answer (resultLost: outcome_unknown for an unsafe tool)', async () => {
      server = await startSdkServer({ era: 'modern', tools });
      const connection = await open(server.url, { timeoutMs: 1500 });
      const hang = await declarationOf(connection, 'hang');
      const failure = await connection.callTool(hang, {}).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(McpFailure);
      expect(failure).toMatchObject({ reason: 'answer_lost', resultLost: true, category: 'timeout' });
      await connection.close();
    });

    it('progress notifications reach the caller', async () => {
      server = await startSdkServer({ era: 'modern', tools });
      const connection = await open(server.url);
      const slow = await declarationOf(connection, 'slow');
      const seen: unknown[] = [];
      await expect(connection.callTool(slow, {}, { onProgress: (p) => seen.push(p) })).resolves.toMatchObject({ text: 'slow done' });
      expect(seen).toEqual([
        { progress: 1, total: 2, message: 'half' },
        { progress: 2, total: 2, message: 'done' },
      ]);
      await connection.close();
    });

    it('an answer over the byte cap fails as invalid_server, not as a lost answer', async () => {
      server = await startSdkServer({ era: 'modern', tools: () => [{ name: 'big', inputSchema: { type: 'object' }, handler: async () => ({ text: 'x'.repeat(200_000) }) }] });
      const connection = await McpConnection.open({ url: server.url, fetch, answerLimitBytes: 64 * 1024 });
      const big = await declarationOf(connection, 'big');
      await expect(connection.callTool(big, {})).rejects.toMatchObject({ reason: 'invalid_server', resultLost: false });
      await connection.close();
    });

    it('headers are resolved at send time, for every request', async () => {
      server = await startSdkServer({ era: 'modern', tools });
      let resolved = 0;
      const connection = await open(server.url, { headers: () => ((resolved += 1), { 'x-api-key': `k${resolved}` }) });
      await connection.listTools();
      expect(resolved).toBeGreaterThanOrEqual(2);
      await connection.close();
    });
  });

  it('an unreachable server is unreachable, and nothing was sent', async () => {
    const closed = await startSdkServer({ era: 'modern', tools: () => [] });
    await closed.close();
    const failure = await open(closed.url).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'unreachable', resultLost: false, category: 'unavailable' });
  });

  it('cappedFetch cuts a body announced larger than the cap before reading it', async () => {
    const fake = async () => new Response('x'.repeat(100), { headers: { 'content-length': '100' } });
    await expect(cappedFetch(fake, 10)('http://example.test/')).rejects.toThrow('more than 10 bytes');
    expect(checkToolList([]).tools).toEqual([]);
  });
});
