import { codec, defineWorkflow, type Json } from '@openbot/engine';
import { isMcpFailure, type McpConnection } from '@openbot/protocol';
import type { Sql } from '../../../platform/src/database/sql';
import type { AppClient } from '../apps/app-client';

interface Crawl {
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly tools: readonly string[];
  readonly needsAuthorization: boolean;
}

export const APP_INDEX = defineWorkflow({
  name: 'app.index',
  audience: 'member',
  input: codec.object({ appId: codec.string, organizationId: codec.string, memberId: codec.string }),
  state: codec.object({ appId: codec.string, organizationId: codec.string, memberId: codec.string, crawl: codec.nullable(codec.json) }),
  result: codec.json,
  calls: { crawl: codec.json },
});

/**
 * Crawls one App into the organization's index (issue 18): one call-log entry reads its card
 * again and lists the tools of its first remote without credentials, outside any transaction. A
 * server that answers 401 is recorded as `needsAuthorization` with no tools, not as a failure.
 * The end transaction writes the entry while the App still exists and the caller is a member.
 */
export function appIndexWorkflow(deps: { readonly db: Sql; readonly client: AppClient }) {
  return APP_INDEX.implement({
    initial: (input) => ({ ...input, crawl: null }),
    next: (state) => (state.crawl === null ? { phase: 'crawl' } : { end: 'completed', result: state.crawl }),
    phases: {
      crawl: {
        async run(context) {
          const crawl = await context.call('crawl', { safe: true, kind: 'other' }, async () => {
            const app = await deps.db.one<{ url: string }>('SELECT url FROM apps WHERE id = $1', [context.state.appId]);
            if (app === undefined) return { gone: true };
            return crawlJson(await crawlApp(deps.client, context.state.organizationId, app.url));
          });
          return { state: { ...context.state, crawl } };
        },
      },
    },
    async end(context) {
      const { appId, organizationId, memberId, crawl } = context.state;
      if (context.outcome !== 'completed' || !isCrawl(crawl)) return;
      const { rowCount: member } = await context.tx.query('SELECT 1 FROM members WHERE id = $1 AND organization_id = $2 AND removed_at IS NULL', [memberId, organizationId]);
      if (member === 0) return;
      await context.tx.query(
        `INSERT INTO app_index_entries (app_id, organization_id, name, title, description, tools, needs_authorization, indexed_at)
         SELECT id, organization_id, $2, $3, $4, $5::jsonb, $6, now() FROM apps WHERE id = $1
         ON CONFLICT (app_id) DO UPDATE SET name = EXCLUDED.name, title = EXCLUDED.title, description = EXCLUDED.description,
           tools = EXCLUDED.tools, needs_authorization = EXCLUDED.needs_authorization, indexed_at = EXCLUDED.indexed_at`,
        [appId, crawl.name, crawl.title, crawl.description, JSON.stringify(crawl.tools), crawl.needsAuthorization],
      );
    },
  });
}

async function crawlApp(client: AppClient, organizationId: string, url: string): Promise<Crawl> {
  const found = (await client.discover(url)).serverCard;
  const remote = found.remotes[0];
  const card = { name: found.name, title: found.title, description: found.description };
  if (remote === undefined) return { ...card, tools: [], needsAuthorization: false };
  let connection: McpConnection | null = null;
  try {
    connection = await client.open({ organizationId, remote, variables: {}, headers: {}, secrets: { variables: {}, headers: {} } }, { actor: null });
    const listed = await connection.listTools();
    return { ...card, tools: listed.tools.map((t) => t.name), needsAuthorization: false };
  } catch (error) {
    if (isMcpFailure(error) && error.reason === 'needs_authorization') return { ...card, tools: [], needsAuthorization: true };
    throw error;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

function crawlJson(crawl: Crawl): Json {
  return JSON.parse(JSON.stringify(crawl)) as Json;
}

function isCrawl(value: unknown): value is Crawl {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.name === 'string' && Array.isArray(v.tools) && typeof v.needsAuthorization === 'boolean';
}
