import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';

/** One App as the index shows it. */
export interface AppIndexEntryView {
  readonly appId: string;
  readonly name: string;
  readonly title: string | null;
  readonly description: string | null;
  readonly tools: readonly string[];
  readonly needsAuthorization: boolean;
  readonly indexedAt: Date;
}

/**
 * Searches the organization's App index (MIG-04). Every read checks, in its own statement, that
 * the App is still the reader's organization's and that it has a verified proof now: an entry
 * whose proof was removed (or never verified) is not shown, whatever the crawl stored. `q` matches
 * case-insensitively in the name, title, description or a tool name.
 */
export class SearchAppIndex extends Query<Page<AppIndexEntryView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly q: string | undefined,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(SearchAppIndex)
export class SearchAppIndexHandler implements IQueryHandler<SearchAppIndex> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, q, page }: SearchAppIndex): Promise<Page<AppIndexEntryView>> {
    const term = q === undefined || q.trim() === '' ? null : `%${q.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.db.rows<AppIndexEntryView & { id: string }>(
      `SELECT e.app_id AS id, e.app_id AS "appId", e.name, e.title, e.description, e.tools, e.needs_authorization AS "needsAuthorization", e.indexed_at AS "indexedAt"
         FROM app_index_entries e JOIN apps a ON a.id = e.app_id AND a.organization_id = $1
        WHERE e.organization_id = $1
          AND EXISTS (SELECT 1 FROM app_proofs p WHERE p.app_id = e.app_id AND p.organization_id = $1 AND p.state = 'verified')
          AND ($2::text IS NULL OR e.name ILIKE $2 OR e.title ILIKE $2 OR e.description ILIKE $2
               OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.tools) t WHERE t ILIKE $2))
          AND ($3::uuid IS NULL OR e.app_id > $3::uuid)
        ORDER BY e.app_id LIMIT $4`,
      [caller.organizationId, term, page.after, page.limit + 1],
    );
    const result = toPage(rows, page.limit);
    return { data: result.data.map(({ id: _id, ...entry }) => entry), next: result.next };
  }
}
