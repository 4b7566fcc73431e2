import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { isUuid, NotFound, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import { Database } from '../../../../platform/src/database/sql';
import { FILE_DELETE } from '../workflows/file-delete.workflow';

/**
 * Deletes a file (FW-08): its metadata row goes now, in the same transaction that submits the
 * `file.delete` execution that removes its bytes. There is no moment in which the row is gone
 * and nothing owns the bytes, nor one in which the bytes are gone and the row still points at them.
 */
export class DeleteFile extends Command<{ readonly executionId: string }> {
  constructor(
    readonly caller: MemberCaller,
    readonly fileId: string,
  ) {
    super();
  }
}

@CommandHandler(DeleteFile)
export class DeleteFileHandler implements ICommandHandler<DeleteFile> {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
  ) {}

  async execute({ caller, fileId }: DeleteFile): Promise<{ executionId: string }> {
    if (!isUuid(fileId)) throw new NotFound('File');
    const executionId = await this.db.transaction(async (tx) => {
      const row = await tx.one<{ objectKey: string }>({
        name: 'files.delete_ready',
        text: `DELETE FROM files WHERE id = $1 AND organization_id = $2 AND state = 'ready' RETURNING object_key AS "objectKey"`,
        values: [fileId, caller.organizationId],
      });
      if (row === undefined) throw new NotFound('File');
      return this.engine.in(tx).submit({
        ...FILE_DELETE.command({ fileId, objectKey: row.objectKey }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'file', id: fileId },
        // No identity to re-check (IDN-06): removing bytes whose metadata the caller was allowed
        // to delete needs no rights later; a member removed meanwhile must not strand them.
      });
    });
    return { executionId };
  }
}
