import { unwrap, type OpenbotClient, type Schemas, type StreamItem } from '@openbot/client';
import type { Command } from 'commander';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, formatTable, type Column } from '../context/output';
import { ListenerAbandoned } from '../context/loopback-listener';
import { followExecution } from './follow';
import { listenerPort, signInThroughLoopback, type AuthorizationOutcome } from './loopback-sign-in';
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
      ['why', proof.failureReason ?? undefined],
      ['token', proof.token],
      ['verified', proof.verifiedAt],
    ]),
  );
  if (proof.state === 'pending') context.io.out(`Serve the token as the whole body of https://${proof.domain}/.well-known/openbot-app-proof, then run: openbot apps proofs verify ${proof.appId} ${proof.id}\n`);
}

function printTest(context: Context, appId: string, test: DeveloperTest, json: boolean | undefined): void {
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
      ['start url', test.authorizationUrl ?? undefined],
      ['authorization', test.authorizationId ?? undefined],
    ]),
  );
  if (test.state === 'needs_authorization' && test.authorizationUrl) {
    context.io.out(`Sign in with your API key through a listener on this machine: openbot apps developer-tests authorize ${appId} ${test.id}\n(or open the start url in your browser signed in to OpenBot)\n`);
  }
}

/** Signs a developer test's pending authorization (its `authorizationId`) in through a loopback listener (`signInThroughLoopback`). */
function signInTest(context: Context, client: OpenbotClient, id: string, options: { port: number; json: boolean | undefined; signal?: AbortSignal }): Promise<AuthorizationOutcome> {
  return signInThroughLoopback(context, client, {
    ...options,
    purpose: 'sign in for the developer test',
    bind: async (redirect) => (await unwrap(client.POST('/v1/oauth/authorizations/{id}/loopback', { params: { path: { id } }, body: { redirect } }))).authorizationUrl,
  });
}

function printOutcome(context: Context, testId: string, outcome: AuthorizationOutcome): void {
  context.io.out(`Developer test ${testId}: ${outcome.state}${outcome.reason === null ? '' : ` (${outcome.reason})`}\n`);
}

/** Waits for an execution's end (a proof's verification, an index crawl). */
async function waitFor(client: OpenbotClient, executionId: string): Promise<void> {
  await followExecution(client, executionId, () => undefined);
}

/**
 * Waits for a developer test's run to end; when the server asks for its developer's sign-in
 * (`developer_test.needs_authorization`), signs it in through a loopback listener on the way.
 */
async function waitForTest(context: Context, client: OpenbotClient, testId: string, executionId: string, options: { port: number; json: boolean | undefined }): Promise<void> {
  const ended = new AbortController();
  const pending: { signIn?: Promise<AuthorizationOutcome> } = {};
  try {
    await followExecution(client, executionId, (item: StreamItem) => {
      if (pending.signIn !== undefined || item.seq === null || item.type !== 'developer_test.needs_authorization' || typeof item.authorizationId !== 'string') return;
      pending.signIn = signInTest(context, client, item.authorizationId, { ...options, signal: ended.signal });
      // Awaited below; until then its failure must not count as unhandled.
      pending.signIn.catch(() => undefined);
    });
  } finally {
    // The run ended: a listener still waiting has nothing left to sign in.
    ended.abort();
  }
  if (pending.signIn === undefined) return;
  // A run that ended without the sign-in (it expired, the test was removed) leaves the listener abandoned: the test shows how it ended.
  const outcome = await pending.signIn.catch((error: unknown) => {
    if (error instanceof ListenerAbandoned) return null;
    throw error;
  });
  if (outcome !== null && !options.json) printOutcome(context, testId, outcome);
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
      await waitFor(client, started.executionId);
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
    .option('--wait', 'wait for the end, then print the test; if the server asks for your sign-in, sign in as `authorize` does')
    .option('--port <port>', 'with --wait: the local port of the sign-in listener (default: any free one)')
    .option('--json', 'print the result as JSON (a sign-in URL goes to stderr)')
    .action(async (appId: string, options: ValueOptions & { remote?: string; wait?: boolean; port?: string; json?: boolean }) => {
      const port = listenerPort(options.port);
      const client = await connect(context);
      const body = { ...(options.remote === undefined ? {} : { remote: options.remote }), ...valuesOf(options) };
      const started = await unwrap(client.POST('/v1/apps/{id}/developer-tests', { params: { path: { id: appId } }, body }));
      if (!options.wait) return context.io.out(options.json ? formatJson(started) : formatFields([['id', started.id], ['execution', started.executionId]]));
      await waitForTest(context, client, started.id, started.executionId, { port, json: options.json });
      printTest(context, appId, await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId: started.id } } })), options.json);
    });
  tests
    .command('show <appId> <testId>')
    .description('show a developer test: its state, connection, tools, and while it needs authorization how to sign in (`authorize`, or the start URL in your signed-in browser)')
    .option('--json', 'print the result as JSON')
    .action(async (appId: string, testId: string, options: { json?: boolean }) => {
      const client = await connect(context);
      printTest(context, appId, await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId } } })), options.json);
    });
  tests
    .command('authorize <appId> <testId>')
    .description(
      'sign in a developer test that needs authorization, bound to you (decision 066): starts a listener on 127.0.0.1, prints the URL to open in a browser on this machine, ' +
        'receives the answer there and completes it with your key; then waits for the test’s end and prints the test',
    )
    .option('--port <port>', 'the local port to listen on (default: any free one)')
    .option('--no-wait', 'only complete the sign-in and print its outcome')
    .option('--json', 'print the result as JSON (the URL goes to stderr)')
    .action(async (appId: string, testId: string, options: { port?: string; wait: boolean; json?: boolean }) => {
      const port = listenerPort(options.port);
      const client = await connect(context);
      const test = await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId } } }));
      if (test.state !== 'needs_authorization' || !test.authorizationId) throw new UsageError(`the developer test is ${test.state}: no sign-in of yours is pending`);
      const outcome = await signInTest(context, client, test.authorizationId, { port, json: options.json });
      if (options.json && !options.wait) return context.io.out(formatJson(outcome));
      if (!options.json) printOutcome(context, testId, outcome);
      if (!options.wait) return;
      await waitFor(client, test.executionId);
      printTest(context, appId, await unwrap(client.GET('/v1/apps/{id}/developer-tests/{testId}', { params: { path: { id: appId, testId } } })), options.json);
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
      if (options.wait) await waitFor(client, started.executionId);
      context.io.out(options.json ? formatJson(started) : formatFields([['execution', started.executionId], ['state', options.wait ? 'completed' : 'started']]));
    });

  const index = program.command('app-index').description('the organization’s App index: crawled Apps with a verified proof');
  pageOptions(index.command('search [q]').description('search by name, title, description or tool name (all entries without q)')).action(async (q: string | undefined, options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap(client.GET('/v1/app-index', { params: { query: { ...pageQuery(options), ...(q === undefined ? {} : { q }) } } }));
    printPage(context, page, INDEX_COLUMNS, options, q === undefined ? 'app-index search' : `app-index search ${q}`);
  });
}
