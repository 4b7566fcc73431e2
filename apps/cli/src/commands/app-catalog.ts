import { unwrap, type OpenbotClient, type Schemas, type StreamItem } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context';
import { UsageError } from '../exit-codes';
import { formatFields, formatJson, formatTable, type Column } from '../output';
import { followExecution } from './follow';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';

type Proof = Schemas['ProofBody'];
type DeveloperTest = Schemas['DeveloperTestBody'];
type IndexEntry = Schemas['AppIndexEntryBody'];

const PROOF_COLUMNS: ReadonlyArray<Column<Proof>> = [
  ['id', (p) => p.id],
  ['domain', (p) => p.domain],
  ['state', (p) => p.state],
  ['verified', (p) => p.verifiedAt],
  ['created', (p) => p.createdAt],
];

const INDEX_COLUMNS: ReadonlyArray<Column<IndexEntry>> = [
  ['app', (e) => e.appId],
  ['name', (e) => e.name],
  ['title', (e) => e.title],
  ['tools', (e) => (e.needsAuthorization ? '(needs authorization)' : e.tools.join(','))],
  ['indexed', (e) => e.indexedAt],
];

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

interface ValueOptions {
  readonly variable?: string[];
  readonly header?: string[];
  readonly variableRef?: string[];
  readonly headerRef?: string[];
}

/**
 * `--variable name=value` / `--header name=value` (literals, stored sealed) and `--variable-ref` /
 * `--header-ref name=<vaultItemId>:<field>[:<prefix>]` (Vault references, opened at each send).
 */
export function valuesOf(options: ValueOptions): { variables: Record<string, unknown>; headers: Record<string, unknown> } {
  const pair = (flag: string, text: string): [string, string] => {
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`${flag} takes name=value, not "${text}"`);
    return [text.slice(0, at), text.slice(at + 1)];
  };
  const reference = (flag: string, text: string): [string, unknown] => {
    const [name, value] = pair(flag, text);
    const [vaultItemId, field, ...prefix] = value.split(':');
    if (!vaultItemId || !field) throw new UsageError(`${flag} takes name=<vaultItemId>:<field>[:<prefix>]`);
    return [name, { vaultItemId, field, ...(prefix.length === 0 ? {} : { prefix: prefix.join(':') }) }];
  };
  return {
    variables: Object.fromEntries([...(options.variable ?? []).map((v) => pair('--variable', v)), ...(options.variableRef ?? []).map((v) => reference('--variable-ref', v))]),
    headers: Object.fromEntries([...(options.header ?? []).map((v) => pair('--header', v)), ...(options.headerRef ?? []).map((v) => reference('--header-ref', v))]),
  };
}

function printProof(context: Context, proof: Proof, json: boolean | undefined): void {
  if (json) return context.io.out(formatJson(proof));
  context.io.out(
    formatFields([
      ['id', proof.id],
      ['app', proof.appId],
      ['domain', proof.domain],
      ['state', proof.state],
      ['token', proof.token],
      ['verified', proof.verifiedAt],
    ]),
  );
  if (proof.state === 'pending') context.io.out(`Serve the token as the whole body of https://${proof.domain}/.well-known/openbot-app-proof, then run: openbot apps proofs verify ${proof.appId} ${proof.id}\n`);
}

function printTest(context: Context, test: DeveloperTest, json: boolean | undefined): void {
  if (json) return context.io.out(formatJson(test));
  const connection = (test.connection ?? null) as { state?: string; era?: string | null; category?: string | null; closed?: string | null } | null;
  context.io.out(
    formatFields([
      ['id', test.id],
      ['state', test.state],
      ['remote', test.remote],
      ['execution', test.executionId],
      ['connection', connection?.state],
      ['era', connection === null ? undefined : connection.era],
      ['category', connection === null ? undefined : connection.category],
      ['closed', connection === null ? undefined : connection.closed],
      ['tools', test.tools],
      ['authorization url', test.authorizationUrl ?? undefined],
    ]),
  );
}

/** Waits for an execution's end; while it runs, a developer test's sign-in URL is printed as soon as its event arrives. */
async function waitFor(context: Context, client: OpenbotClient, executionId: string, json: boolean | undefined): Promise<void> {
  await followExecution(client, executionId, (item: StreamItem) => {
    if (item.seq !== null && item.type === 'developer_test.needs_authorization' && typeof item.authorizationUrl === 'string') {
      // Headless by design, as `connections authorize`: the URL is printed, to be opened in any browser (valid once, for 10 minutes).
      const say = json ? context.io.err.bind(context.io) : context.io.out.bind(context.io);
      say(`Open this URL in a browser to sign in for the developer test:\n${item.authorizationUrl}\n`);
    }
  });
}

/**
 * `openbot apps proofs|developer-tests|index` and `openbot app-index search`: domain proofs of an
 * App, developer tests (DEVT-01) and the organization's App index.
 */
export function appCatalogCommands(program: Command, apps: Command, context: Context): void {
  const proofs = apps.command('proofs').description('proofs of an App’s domain (developer tests and the App index need a verified one)');
  proofs
    .command('create <appId> <domain>')
    .description('start a proof of the App’s domain (its host, with a port when it has one): prints the token to serve')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, domain: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printProof(context, await unwrap(client.POST('/v1/apps/{id}/proofs', { params: { path: { id: appId } }, body: { domain } })), options.json);
    });
  proofs
    .command('verify <appId> <proofId>')
    .description('fetch the token from the domain (an execution); waits for it and prints the proof')
    .option('--no-wait', 'only start the verification and print its execution')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, proofId: string, options: { wait: boolean; json?: boolean }) => {
      const client = await connect(context);
      const started = await unwrap(client.POST('/v1/apps/{id}/proofs/{proofId}/verify', { params: { path: { id: appId, proofId } } }));
      if (!options.wait) return context.io.out(options.json ? formatJson(started) : formatFields([['execution', started.executionId]]));
      await waitFor(context, client, started.executionId, options.json);
      printProof(context, await unwrap(client.GET('/v1/apps/{id}/proofs/{proofId}', { params: { path: { id: appId, proofId } } })), options.json);
    });
  proofs
    .command('delete <appId> <proofId>')
    .description('remove a proof: the App index hides the App unless another verified proof remains')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, proofId: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printProof(context, await unwrap(client.DELETE('/v1/apps/{id}/proofs/{proofId}', { params: { path: { id: appId, proofId } } })), options.json);
    });
  proofs
    .command('list <appId>')
    .description('list the proofs of an App, newest first')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, options: { json?: boolean }) => {
      const client = await connect(context);
      const list = await unwrap(client.GET('/v1/apps/{id}/proofs', { params: { path: { id: appId } } }));
      context.io.out(options.json ? formatJson(list) : formatTable(list.data, PROOF_COLUMNS));
    });

  const tests = apps.command('developer-tests').description('developer tests: a pre-publish connection with your own values and sign-in, probed and its tools listed');
  tests
    .command('start <appId>')
    .description('start a developer test of one remote of the App (an execution)')
    .option('--remote <url>', 'the url of one of the App’s remotes (default: the first)')
    .option('--variable <name=value>', 'a URL variable (repeatable; stored sealed until the run ends)', collect)
    .option('--variable-ref <name=itemId:field>', 'a URL variable from a Vault item field, with an optional :prefix (repeatable)', collect)
    .option('--header <name=value>', 'a header (repeatable; stored sealed until the run ends)', collect)
    .option('--header-ref <name=itemId:field>', 'a header from a Vault item field, with an optional :prefix (repeatable)', collect)
    .option('--wait', 'wait for the end (printing the sign-in URL if the server asks for one), then print the test')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, options: ValueOptions & { remote?: string; wait?: boolean; json?: boolean }) => {
      const client = await connect(context);
      const body = { ...(options.remote === undefined ? {} : { remote: options.remote }), ...valuesOf(options) };
      const started = await unwrap(client.POST('/v1/apps/{id}/developer-tests', { params: { path: { id: appId } }, body }));
      if (!options.wait) return context.io.out(options.json ? formatJson(started) : formatFields([['id', started.id], ['execution', started.executionId]]));
      await waitFor(context, client, started.executionId, options.json);
      printTest(context, await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId: started.id } } })), options.json);
    });
  tests
    .command('show <appId> <testId>')
    .description('show a developer test: its state, connection, tools, and the sign-in URL while it needs authorization')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, testId: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printTest(context, await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId } } })), options.json);
    });
  tests
    .command('delete <appId> <testId>')
    .description('remove a developer test: its grant goes to cleanup once its run has ended')
    .action(async (appId: string, testId: string) => {
      const client = await connect(context);
      const removed = await unwrap(client.DELETE('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId } } }));
      context.io.out(formatFields([['removed', removed.id]]));
    });

  apps
    .command('index <appId>')
    .description('crawl the App into the organization’s App index (an execution): its card and the tools of its first remote')
    .option('--no-wait', 'only start the crawl and print its execution')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, options: { wait: boolean; json?: boolean }) => {
      const client = await connect(context);
      const started = await unwrap(client.POST('/v1/apps/{id}/index', { params: { path: { id: appId } } }));
      if (options.wait) await waitFor(context, client, started.executionId, options.json);
      context.io.out(options.json ? formatJson(started) : formatFields([['execution', started.executionId], ['state', options.wait ? 'completed' : 'started']]));
    });

  const index = program.command('app-index').description('the organization’s App index: crawled Apps with a verified proof');
  pageOptions(index.command('search [q]').description('search by name, title, description or tool name (all entries without q)')).action(async (q: string | undefined, options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/app-index', { params: { query: { ...pageQuery(options), ...(q === undefined ? {} : { q }) } } }));
    printPage(context, page, INDEX_COLUMNS, options, q === undefined ? 'app-index search' : `app-index search ${q}`);
  });
}
