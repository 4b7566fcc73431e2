import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * OpenBot's App OAuth client against the MCP conformance suite's client auth scenarios
 * (`@modelcontextprotocol/conformance`, offline: each scenario starts its own MCP server and
 * authorization server on loopback). The client under test is the compiled
 * test/conformance/oauth-client.ts, which drives OpenBot's own OAuth functions and MCP client
 * (discovery, the registration order, PKCE authorization, code exchange, a tool call with the
 * bearer token, scope step-up), not the SDK's `auth()` loop. Every auth scenario the suite has
 * is listed here, as supported (it must pass: no failed and no warning check) or as not
 * supported with the reason (it must be reported as failed, so the list stays honest).
 * docs/app-oauth.md shows the same table.
 */
const ROOT = join(__dirname, '..', '..');
const CLIENT = join(ROOT, 'dist', 'test', 'conformance', 'oauth-client.js');
const CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const run = promisify(execFile);

jest.setTimeout(120_000);

const SUPPORTED = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
] as const;

const NO_PROTECTED_RESOURCE_METADATA =
  'OpenBot starts authorization from protected-resource metadata (RFC 9728, MCP 2025-06-18 and later); a server with none is discovery_failed, with no fallback to the 2025-03-26 rules';
const NOT_SUPPORTED: Readonly<Record<string, string>> = {
  'auth/2025-03-26-oauth-metadata-backcompat': NO_PROTECTED_RESOURCE_METADATA,
  'auth/2025-03-26-oauth-endpoint-fallback': `${NO_PROTECTED_RESOURCE_METADATA} (nor to the default /authorize, /token and /register endpoints)`,
  'auth/client-credentials-jwt': 'App connections are authorized for a person with the authorization-code flow; the client_credentials grant (SEP-1046, private_key_jwt) is not built',
  'auth/client-credentials-basic': 'App connections are authorized for a person with the authorization-code flow; the client_credentials grant (SEP-1046) is not built',
  'auth/cross-app-access-complete-flow': 'enterprise-managed authorization (SEP-990: token exchange, then a JWT bearer grant) is not built',
};

/** The suites that hold the auth scenarios: the 2025-11-25 auth suite, the 2025-03-26 back-compat one, the draft one and the extensions. */
const SUITES = ['auth', 'backcompat', 'draft', 'extensions'] as const;

interface Check {
  readonly id: string;
  readonly status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO';
  readonly description: string;
}

describe('App OAuth client against the MCP conformance suite (client auth scenarios)', () => {
  const out = mkdtempSync(join(tmpdir(), 'openbot-oauth-conformance-'));
  /** Each scenario's checks, from the suite's own results (results/<scenario>-<time>/checks.json). */
  const results = new Map<string, Check[]>();
  let listed: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CLIENT)) throw new Error(`${CLIENT} is missing: run \`npm run build\` first (\`npm test\` builds before running jest).`);
    const list = await run(process.execPath, [CLI, 'list'], { cwd: ROOT });
    listed = [...list.stdout.matchAll(/^\s+- (auth\/\S+)/gm)].map((m) => m[1]!);
    // The suites run their scenarios in parallel; the suites themselves too. A failed scenario exits non-zero: read the results either way.
    await Promise.all(
      SUITES.map((suite) =>
        run(process.execPath, [CLI, 'client', '--command', `${process.execPath} ${CLIENT}`, '--suite', suite, '--timeout', '30000', '-o', join(out, suite)], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).catch(
          (error: { code?: unknown }) => {
            if (typeof error.code !== 'number') throw error;
          },
        ),
      ),
    );
    for (const suite of SUITES) {
      const base = join(out, suite, 'auth');
      if (!existsSync(base)) continue;
      for (const entry of readdirSync(base)) {
        const name = `auth/${entry.replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')}`;
        results.set(name, JSON.parse(readFileSync(join(base, entry, 'checks.json'), 'utf8')) as Check[]);
      }
    }
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const failed = (name: string): Check[] => (results.get(name) ?? []).filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');

  it('every auth scenario of the suite is listed here, as supported or not with a reason, and each one ran', () => {
    expect([...listed].sort()).toEqual([...SUPPORTED, ...Object.keys(NOT_SUPPORTED)].sort());
    expect([...results.keys()].sort()).toEqual([...listed].sort());
  });

  it.each(SUPPORTED.map((name) => [name]))('%s passes: no failed and no warning check', (name) => {
    expect(results.get(name)?.length).toBeGreaterThan(0);
    expect(failed(name).map((check) => `${check.id}: ${check.description}`)).toEqual([]);
  });

  it.each(Object.entries(NOT_SUPPORTED))('%s is reported as failed (not supported: %s)', (name) => {
    expect(failed(name).length).toBeGreaterThan(0);
  });
});
