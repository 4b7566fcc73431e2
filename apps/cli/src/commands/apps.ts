import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { appCatalogCommands } from './app-catalog';
import { listenerPort, signInThroughLoopback } from './loopback-sign-in';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';
import { plain } from '../context/plain-calls';

interface App {
  readonly id: string;
  readonly name: string;
  readonly title: string | null;
  readonly card: boolean;
  readonly url: string;
  readonly remotes: ReadonlyArray<{ readonly url: string }>;
}

interface Connection {
  readonly id: string;
  readonly appId: string;
  readonly owner: string;
  readonly state: string;
  readonly revision: number;
  readonly era: string | null;
  readonly remote: string;
  readonly warnings: readonly string[];
}

interface ConnectionTool {
  readonly name: string;
  readonly description: string | null;
  readonly annotations: Record<string, boolean>;
}


const APP_COLUMNS: ReadonlyArray<Column<App>> = [
  ['id', (a) => a.id],
  ['name', (a) => a.name],
  ['title', (a) => a.title ?? ''],
  ['card', (a) => (a.card ? 'yes' : 'no')],
  ['remotes', (a) => a.remotes.map((r) => r.url).join(' ')],
];

const CONNECTION_COLUMNS: ReadonlyArray<Column<Connection>> = [
  ['id', (c) => c.id],
  ['app', (c) => c.appId],
  ['owner', (c) => c.owner],
  ['state', (c) => c.state],
  ['revision', (c) => String(c.revision)],
  ['era', (c) => c.era ?? ''],
  ['remote', (c) => c.remote],
];

const TOOL_COLUMNS: ReadonlyArray<Column<ConnectionTool>> = [
  ['name', (t) => t.name],
  ['hints', (t) => Object.entries(t.annotations).filter(([, v]) => v).map(([k]) => k.replace(/Hint$/, '')).join(',')],
  ['description', (t) => (t.description ?? '').split('\n')[0]!.slice(0, 80)],
];

/** `openbot apps add|list` (MCP servers of the organization), with their proofs, developer tests and index (app-catalog.ts). */
export function appsCommand(program: Command, context: Context): void {
  const apps = program.command('apps').description('Apps: MCP servers the organization’s Bots may use');

  apps
    .command('add <url>')
    .description('register an App from its Server Card URL, or a Streamable HTTP endpoint without one')
    .option('--connect', 'also set up an organization connection to its first remote')
    .option('--header <name=value>', 'a header of that connection (repeatable; stored sealed)', collect, [])
    .option('--json', 'print the result as JSON')
    .action(async (url: string, options: { connect?: boolean; header: string[]; json?: boolean }) => {
      const client = await connect(context);
      const app = await unwrap<App>(plain(client).POST('/v1/apps', { params: {}, body: { url } }) as never);
      let connection: unknown = null;
      if (options.connect) {
        const headers = Object.fromEntries(options.header.map(splitPair));
        connection = await unwrap(plain(client).POST('/v1/apps/{id}/connections', { params: { path: { id: app.id } }, body: { headers } }) as never);
      }
      if (options.json) return context.io.out(formatJson(connection === null ? app : { app, connection }));
      context.io.out(formatFields([
        ['id', app.id],
        ['name', app.name],
        ['title', app.title],
        ['card', app.card ? 'yes' : 'no'],
        ['remotes', app.remotes.map((r) => r.url).join(' ')],
        ...(connection === null ? [] : ([['connection', (connection as Connection).id], ['state', (connection as Connection).state]] as Array<[string, string]>)),
      ]));
    });

  pageOptions(apps.command('list').description('list the Apps of the organization')).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap<{ data: App[]; next: string | null }>(plain(client).GET('/v1/apps', { params: { query: pageQuery(options) } }) as never);
    printPage(context, page, APP_COLUMNS, options, 'apps list');
  });
  appCatalogCommands(program, apps, context);

  const connections = program.command('connections').description('connections to Apps (of the organization, or your own)');
  pageOptions(connections.command('list').description('list the connections you may see').option('--app <id>', 'only this App')).action(async (options: PageOptions & { app?: string }) => {
    const client = await connect(context);
    const query = { ...pageQuery(options), ...(options.app !== undefined ? { appId: options.app } : {}) };
    const page = await unwrap<{ data: Connection[]; next: string | null }>(plain(client).GET('/v1/connections', { params: { query } }) as never);
    printPage(context, page, CONNECTION_COLUMNS, options, 'connections list');
  });
  pageOptions(connections.command('tools <id>').description('full discovery: the tools of the connection’s server')).action(async (id: string, options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap<{ data: ConnectionTool[]; next: string | null }>(plain(client).GET('/v1/connections/{id}/tools', { params: { path: { id }, query: pageQuery(options) } }) as never);
    printPage(context, page, TOOL_COLUMNS, options, `connections tools ${id}`);
  });
  connections
    .command('authorize <id>')
    .description(
      'OAuth authorization of a connection, bound to you (decision 066): starts a listener on 127.0.0.1, prints the URL to open in a browser on this machine, ' +
        'receives the answer there and completes it with your key',
    )
    .option('--return-to <path>', 'a path of the server to land on after the callback (browser sign-ins only)')
    .option('--port <port>', 'the local port to listen on (default: any free one)')
    .option('--json', 'print the outcome as JSON (the URL goes to stderr)')
    .action(async (id: string, options: { returnTo?: string; port?: string; json?: boolean }) => {
      const port = listenerPort(options.port);
      const client = await connect(context);
      const done = await signInThroughLoopback(context, client, {
        port,
        purpose: 'authorize the connection',
        json: options.json,
        bind: async (loopbackRedirect) => {
          const body = { loopbackRedirect, ...(options.returnTo === undefined ? {} : { returnTo: options.returnTo }) };
          return (await unwrap<{ authorizationUrl: string }>(plain(client).POST('/v1/connections/{id}/authorize', { params: { path: { id } }, body }) as never)).authorizationUrl;
        },
      });
      if (options.json) return context.io.out(formatJson(done));
      context.io.out(`Connection ${id}: ${done.state}${done.reason === null ? '' : ` (${done.reason})`}\n`);
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function splitPair(pair: string): [string, string] {
  const at = pair.indexOf('=');
  if (at <= 0) throw new UsageError(`--header takes name=value, not "${pair}"`);
  return [pair.slice(0, at), pair.slice(at + 1)];
}
