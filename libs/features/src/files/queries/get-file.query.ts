import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Database } from '../../../../platform/src/database/sql';
import { FILE_VIEW_COLUMNS, type FileView } from '../file-view';

/** One file of the caller's organization; malformed, unknown, uploading and foreign IDs are one NotFound. */
export class GetFile extends Query<FileView> {
  constructor(
    readonly caller: MemberCaller,
    readonly fileId: string,
  ) {
    super();
  }
}

@QueryHandler(GetFile)
export class GetFileHandler implements IQueryHandler<GetFile> {
  constructor(@Inject(Database) private readonly db: Database) {}

  async execute({ caller, fileId }: GetFile): Promise<FileView> {
    if (!isUuid(fileId)) throw new NotFound('File');
    const row = await this.db.one<FileView>(`SELECT ${FILE_VIEW_COLUMNS} FROM files WHERE id = $1 AND organization_id = $2 AND state = 'ready'`, [
      fileId,
      caller.organizationId,
    ]);
    if (row === undefined) throw new NotFound('File');
    return row;
  }
}
