import { Inject } from '@nestjs/common';
import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import type { Readable } from 'node:stream';
import { Database } from '../../../../platform/src/database/sql';
import { OBJECT_STORE, ObjectNotFound, type ObjectStore } from '../../../../platform/src/object-store/object-store';
import { FILE_VIEW_COLUMNS, type FileView } from '../file-view';

/** A file's metadata and its bytes as a stream from the object store (never read whole). */
export class OpenFileContent extends Query<{ readonly file: FileView; readonly body: Readable }> {
  constructor(
    readonly caller: MemberCaller,
    readonly fileId: string,
  ) {
    super();
  }
}

@QueryHandler(OpenFileContent)
export class OpenFileContentHandler implements IQueryHandler<OpenFileContent> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  async execute({ caller, fileId }: OpenFileContent): Promise<{ file: FileView; body: Readable }> {
    if (!isUuid(fileId)) throw new NotFound('File');
    const row = await this.db.one<FileView & { objectKey: string }>(
      `SELECT ${FILE_VIEW_COLUMNS}, object_key AS "objectKey" FROM files WHERE id = $1 AND organization_id = $2 AND state = 'ready'`,
      [fileId, caller.organizationId],
    );
    if (row === undefined) throw new NotFound('File');
    const { objectKey, ...file } = row;
    try {
      return { file, body: await this.store.get(objectKey) };
    } catch (error) {
      // Deleted between the read and the open: the file is gone.
      if (error instanceof ObjectNotFound) throw new NotFound('File');
      throw error;
    }
  }
}
