/**
 * OpenBot's App OAuth client as a program for the MCP conformance suite
 * (`@modelcontextprotocol/conformance client --command "node dist/test/conformance/oauth-client.js"`):
 * the suite starts a scenario's MCP server and authorization server on loopback and runs this
 * with the MCP server's URL as the last argument, the scenario's name in
 * `MCP_CONFORMANCE_SCENARIO` and its context (a pre-registered client) in `MCP_CONFORMANCE_CONTEXT`.
 *
 * It drives OpenBot's own code, not the SDK's `auth()` loop: the OAuth functions of
 * libs/protocol/src/oauth (see ./authorize.ts) and OpenBot's MCP client (`McpConnection`), with
 * the bearer token as a request header, as `ConnectionAuthorization` adds it. The moves are the
 * ones OpenBot makes: an unauthenticated probe first (a 401 starts authorization); a request
 * refused with 401 starts authorization from that challenge; a 403 `insufficient_scope` is a
 * scope step-up (the union of scopes), at most `STEP_UP_LIMIT` in a row. It exits 0 once it has
 * listed the tools and called the first one, 1 when OpenBot would refuse to go on.
 *
 * Not the same as OpenBot's durable flow: no call log, no database, the browser is the
 * scenario's server approving at once (its redirect is read, not followed), and with CIMD the
 * `client_id` is the suite's fixed document URL (the suite cannot fetch one of ours).
 */
import '../../apps/server/src/module-paths';
import {
  bearerChallengeOf,
  declare,
  insufficientScopeOf,
  isOAuthFailure,
  McpConnection,
  McpFailure,
  readBearerChallenge,
  STEP_UP_LIMIT,
  type BearerChallenge,
  type Fetch,
  type TokenSet,
} from '@openbot/protocol';
import { authorize, type ClientSetup } from './authorize';

/** The Client ID Metadata Document URL the conformance suite expects as `client_id` (auth/basic-cimd). */
const CONFORMANCE_METADATA_DOCUMENT_URL = 'https://conformance-test.local/client-metadata.json';
/** Authorizations after a 401 with a token in hand: OpenBot refreshes once, then needs authorization; this program has no refresh, so one. */
const REAUTHORIZATIONS = 1;

interface Refusal {
  readonly status: number;
  readonly challenge: BearerChallenge;
  /** The scope a 403 `insufficient_scope` names; null for anything else. */
  readonly insufficientScope: string | null;
}

const log = (line: string): void => void process.stderr.write(`[openbot-oauth] ${line}\n`);

async function main(): Promise<number> {
  const serverUrl = process.argv.at(-1);
  if (serverUrl === undefined || !/^https?:\/\//.test(serverUrl)) throw new Error('usage: oauth-client <mcp server url>');
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as { client_id?: unknown; client_secret?: unknown };
  /** The last 401 or 403 answer and its challenge (the transport keeps only a status). */
  const seen: { last: Refusal | null } = { last: null };
  // The suite's servers are loopback http; OpenBot's egress client would be here in production.
  const fetch: Fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init);
    if (response.status === 401 || response.status === 403) seen.last = { status: response.status, challenge: bearerChallengeOf(response), insufficientScope: insufficientScopeOf(response) };
    return response;
  };
  const setup: ClientSetup = {
    fetch,
    serverUrl,
    publicUrl: 'https://openbot.conformance.invalid',
    preRegistered: typeof context.client_id === 'string' && typeof context.client_secret === 'string' ? { clientId: context.client_id, clientSecret: context.client_secret } : null,
    metadataDocumentUrl: CONFORMANCE_METADATA_DOCUMENT_URL,
    log,
  };
  log(`scenario ${process.env.MCP_CONFORMANCE_SCENARIO ?? '(none)'} at ${serverUrl}`);

  let tokens: TokenSet | null = null;
  try {
    tokens = await authorize(setup, await readBearerChallenge(fetch, serverUrl), null);
  } catch (error) {
    if (!isOAuthFailure(error) || error.reason !== 'not_required') throw error;
    log('the unauthenticated probe was answered: no authorization yet');
  }
  let stepUps = 0;
  let reauthorizations = 0;
  for (;;) {
    seen.last = null;
    try {
      await useServer(serverUrl, fetch, tokens);
      return 0;
    } catch (error) {
      const refusal = seen.last as Refusal | null; // set by the fetch above, meanwhile
      if (!(error instanceof McpFailure) || error.reason !== 'needs_authorization' || refusal === null) throw error;
      if (refusal.insufficientScope !== null) {
        if (stepUps >= STEP_UP_LIMIT) {
          log(`refused: the server asked for more scope ${STEP_UP_LIMIT} times in a row (step_up_limit)`);
          return 1;
        }
        stepUps++;
        log(`HTTP 403 insufficient_scope: step-up ${stepUps} for ${refusal.insufficientScope}`);
        tokens = await authorize(setup, refusal.challenge, refusal.insufficientScope);
      } else {
        if (tokens !== null && reauthorizations++ >= REAUTHORIZATIONS) {
          log('refused: the server keeps refusing the token (needs_authorization)');
          return 1;
        }
        log(`HTTP ${refusal.status}: authorizing from its challenge`);
        stepUps = 0;
        tokens = await authorize(setup, refusal.challenge, null);
      }
    }
  }
}

/** Opens OpenBot's MCP connection with the bearer token, lists the tools and calls the first one. */
async function useServer(url: string, fetch: Fetch, tokens: TokenSet | null): Promise<void> {
  const connection = await McpConnection.open({
    url,
    fetch,
    answerLimitBytes: 1024 * 1024,
    headers: (): Record<string, string> => (tokens === null ? {} : { authorization: `Bearer ${tokens.access_token}` }),
    timeoutMs: 10_000,
  });
  try {
    const listed = await connection.listTools();
    log(`tools: ${listed.tools.map((tool) => tool.name).join(', ') || '(none)'}`);
    const first = listed.tools[0];
    if (first !== undefined) {
      const answer = await connection.callTool(declare(first, { id: 'conformance', revision: 1 }, first.name), {});
      log(`called ${first.name}: ${answer.isError ? 'error' : 'ok'} ${answer.text.slice(0, 80)}`);
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    process.exit(1);
  },
);
