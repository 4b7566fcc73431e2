import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * A local MCP server started as a child process, for development only: it runs with the
 * server's own rights on this machine, so OpenBot never offers it through its API and refuses it
 * when `NODE_ENV` is `production`. Returns a plain SDK client (no Server Card, no egress).
 */
export async function openStdioForDevelopment(command: string, args: readonly string[] = [], env: Readonly<Record<string, string>> = {}): Promise<Client> {
  if (process.env.NODE_ENV === 'production') throw new Error('stdio MCP servers are for local development only and are off in production');
  const client = new Client({ name: 'openbot-dev', version: '0.1.0' });
  await client.connect(new StdioClientTransport({ command, args: [...args], env: { ...env } }));
  return client;
}
