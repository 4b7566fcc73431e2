import { FakeOpenAiServer, textReply, toolCallReply } from '../fakes/fake-openai-server';
import { FakeToolServer, jsonReply } from '../fakes/fake-tool-server';
import { createChatFixture, eventsUntilEnd, replyText, sendMessage } from '../support/chat-fixture';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * SEC-01 on a real Turn: queue and engine messages carry only record references; the Turn's
 * input, its tool's arguments and result, the model's text and its events live sealed. Every row
 * of the engine's tables and of pg-boss's job table is read raw; none holds any of the Turn's
 * distinctive strings in the clear, while the API still answers them (sealed, not dropped).
 */

const USER_TEXT = 'user-message-6e1f-sealed';
const TOOL_ARGUMENT = 'tool-argument-a93c-sealed';
const TOOL_RESULT = 'tool-result-0d7b-sealed';
const MODEL_TEXT = 'model-reply-58e2-sealed';
const SECRETS = [USER_TEXT, TOOL_ARGUMENT, TOOL_RESULT, MODEL_TEXT];

describe('[SEC-01] a Turn leaves no plaintext in engine rows or queue jobs', () => {
  let t: TestApp;
  let model: FakeOpenAiServer;
  let tools: FakeToolServer;

  beforeAll(async () => {
    t = await startTestApp();
    model = await FakeOpenAiServer.start();
    tools = await FakeToolServer.start();
  });
  afterAll(async () => {
    await model?.close();
    await tools?.close();
    await t?.close();
  });

  /** Every row of the engine's tables and pg-boss's tables as JSON text (bytea as hex). */
  async function engineRows(): Promise<Array<{ table: string; row: string }>> {
    const tables = await t.database.query<{ name: string }>(
      `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND ((table_schema = 'public' AND (table_name LIKE 'execution%' OR table_name IN ('error_records', 'sealed_records'))) OR table_schema = 'pgboss')`,
    );
    const rows: Array<{ table: string; row: string }> = [];
    for (const { name } of tables) for (const r of await t.database.query<{ row: string }>(`SELECT row_to_json(x)::text AS row FROM ${name} x`)) rows.push({ table: name, row: r.row });
    return rows;
  }

  it('[SEC-01] after a Turn with a tool call, every pg-boss job holds only an execution ID, and no engine row holds the message, the tool arguments and result, the model text or the API key of the identity', async () => {
    const chat = await createChatFixture(t, {
      baseUrl: model.baseUrl,
      tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { q: { type: 'string' } } }, kind: 'http', url: tools.url('/lookup') }],
    });
    tools.enqueue(jsonReply(200, { modelOutput: TOOL_RESULT }));
    model.enqueue(toolCallReply('call_s1', 'lookup', [`{"q":"${TOOL_ARGUMENT}"}`], [10, 5]), textReply([MODEL_TEXT], [20, 4]));
    const admitted = await sendMessage(t, chat.secret, chat.chatId, USER_TEXT);
    const events = await eventsUntilEnd(t, chat.secret, admitted.executionId);
    expect(events.at(-1)).toMatchObject({ type: 'execution.ended', state: 'completed' });
    // Sealed, not dropped: the events read back the arguments and the reply, and the tool result reached the next model step.
    expect(events.find((e) => e.type === 'tool.called')).toMatchObject({ arguments: `{"q":"${TOOL_ARGUMENT}"}` });
    expect(replyText(events)).toBe(MODEL_TEXT);
    expect(JSON.stringify(model.requests[1]?.body)).toContain(TOOL_RESULT);
    expect(JSON.stringify(model.requests[0]?.body)).toContain(USER_TEXT);

    // The identity is sealed too: the original token (the API key the message came with) is in no clear column.
    const [key] = await t.database.query<{ id: string }>('SELECT id FROM api_keys WHERE organization_id = $1', [chat.organizationId]);
    const rows = await engineRows();
    const leaks = [...SECRETS, key!.id].flatMap((secret) => {
      const hex = Buffer.from(secret, 'utf8').toString('hex');
      return rows.filter((r) => r.row.includes(secret) || r.row.toLowerCase().includes(hex)).map((r) => ({ secret, table: r.table }));
    });
    expect(leaks).toEqual([]);
    // The scan covered the Turn's own rows: its execution, calls, events and queue jobs.
    const covered = new Set(rows.filter((r) => r.row.includes(admitted.executionId)).map((r) => r.table));
    expect([...covered]).toEqual(expect.arrayContaining(['public.executions', 'public.execution_calls', 'public.execution_events', 'pgboss.job']));

    // Every job of every queue carries one execution ID and nothing else.
    const jobs = await t.database.query<{ name: string; data: unknown }>('SELECT name, data FROM pgboss.job');
    expect(jobs.length).toBeGreaterThan(0);
    const executions = new Set((await t.database.query<{ id: string }>('SELECT id FROM executions')).map((r) => r.id));
    for (const job of jobs) {
      expect(job.data).toEqual({ executionId: expect.any(String) });
      expect(executions.has((job.data as { executionId: string }).executionId)).toBe(true);
    }

    // Events at rest: each one with a payload is sealed under a key ID, its type and position the only clear columns.
    const stored = await t.database.query<{ type: string; key_id: string | null; data: Buffer | null }>('SELECT type, key_id, data FROM execution_events WHERE execution_id = $1', [admitted.executionId]);
    expect(stored.some((e) => e.type === 'text.delta')).toBe(true);
    for (const e of stored) {
      if (e.data === null) continue;
      expect(e.key_id).toEqual(expect.any(String));
      expect(e.data.toString('latin1')).not.toMatch(/sealed|"text"|"type"/);
    }
  });
});
