import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { toPage, type MemberCaller, type Page, type PageRequest } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { FILE_VIEW_COLUMNS, type FileView } from '../file-view';

/** The organization's files, newest first (descending UUIDv7 `id`; `next` continues with older ones). */
export class ListFiles extends Query<Page<FileView>> {
  constructor(
    readonly caller: MemberCaller,
    readonly page: PageRequest,
  ) {
    super();
  }
}

@QueryHandler(ListFiles)
export class ListFilesHandler implements IQueryHandler<ListFiles> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, page }: ListFiles): Promise<Page<FileView>> {
    const rows = await this.db.rows<FileView>(
      `SELECT ${FILE_VIEW_COLUMNS} FROM files
        WHERE organization_id = $1 AND state = 'ready' AND ($2::uuid IS NULL OR id < $2::uuid)
        ORDER BY id DESC LIMIT $3`,
      [caller.organizationId, page.after, page.limit + 1],
    );
    return toPage(rows, page.limit);
  }
}
