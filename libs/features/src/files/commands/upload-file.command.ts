import { Inject, Logger } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { InvalidInput, newId, type MemberCaller } from '@openbot/domain';
import { Engine } from '@openbot/engine';
import type { Readable } from 'node:stream';
import { RUNTIME_CONFIG, type RuntimeConfig } from '../../../../platform/src/config/runtime-config';
import { Database } from '../../../../platform/src/database/sql';
import { checkRoomFor } from '../../../../platform/src/limits/organization-limits';
import { OBJECT_STORE, type ObjectStore } from '../../../../platform/src/object-store/object-store';
import { ContentTypeMismatch, FileContentCheck, normalizeContentType } from '../file-content';
import { FILE_VIEW_COLUMNS, type FileView } from '../file-view';
import { abandonTimeOf, FILE_SETTLED_SIGNAL, FILE_UPLOAD_GUARD } from '../workflows/file-upload-guard.workflow';

export interface UploadedPart {
  /** The part's filename as given (kept as the file's name). */
  readonly name: string;
  /** The part's declared content type. */
  readonly contentType: string | undefined;
  /** The bytes, read once as they arrive. A failing stream (too large, broken off) fails the upload. */
  readonly body: Readable;
  /** Runs after the last byte, before the commit: the transport refuses what followed the part here (a second part). */
  readonly afterBody?: () => Promise<void>;
}

/**
 * Uploads a file (decision 028): the `uploading` row and its guard execution commit first, then
 * the bytes stream to the object store through the content check (type signature, sha256, size),
 * then the row becomes `ready` and the guard is told. Nothing is held in memory but the stream's
 * chunks. A failure removes the bytes and the row at once; a crash leaves them to the guard,
 * which removes them after the upload's deadline wherever the engine runs it. The organization's
 * stored bytes are limited (`fileBytes`, decision 076): an upload is refused at its start when
 * nothing is left, and at its commit (under the limit's lock) when its bytes do not fit; both
 * 409 LimitReached, the bytes removed.
 */
export class UploadFile extends Command<FileView> {
  constructor(
    readonly caller: MemberCaller,
    readonly part: UploadedPart,
  ) {
    super();
  }
}

@CommandHandler(UploadFile)
export class UploadFileHandler implements ICommandHandler<UploadFile> {
  private readonly logger = new Logger('Files');

  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(Engine) private readonly engine: Engine,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  async execute({ caller, part }: UploadFile): Promise<FileView> {
    const name = checkName(part.name);
    const contentType = normalizeContentType(part.contentType);
    // The check consumes the part from the start: a body that fails while the row is being written
    // (a truncated multipart body fails at once) must fail the upload, not leave it waiting on a
    // stream that already died. Backpressure holds the rest of the body until the store reads.
    const check = new FileContentCheck(contentType);
    part.body.on('error', (error) => check.destroy(error));
    if (part.body.errored) check.destroy(part.body.errored);
    else part.body.pipe(check);
    const fileId = newId();
    const objectKey = `files/${caller.organizationId}/${fileId}`;
    const timeoutMs = this.config.files.uploadTimeoutSeconds * 1000;
    const deadline = new Date(this.engine.clock.now() + timeoutMs);
    const guardId = await this.db.transaction(async (tx) => {
      // Nothing left: refused before a byte is stored (the commit checks the real size).
      await checkRoomFor(tx, caller.organizationId, this.config.organizationLimits, 'fileBytes');
      const executionId = await this.engine.in(tx).submit({
        ...FILE_UPLOAD_GUARD.command({ fileId, objectKey, abandonAt: abandonTimeOf(deadline, timeoutMs).toISOString() }),
        scope: { kind: 'member', id: caller.memberId, organizationId: caller.organizationId },
        resource: { type: 'file', id: fileId },
      });
      await tx.query({
        name: 'files.insert_uploading',
        text: `INSERT INTO files (id, organization_id, created_by, name, content_type, object_key, state, upload_deadline, guard_execution_id)
               VALUES ($1, $2, $3, $4, $5, $6, 'uploading', $7, $8)`,
        values: [fileId, caller.organizationId, caller.memberId, name, contentType, objectKey, deadline, executionId],
      });
      return executionId;
    });

    const cutOff = AbortSignal.timeout(timeoutMs);
    try {
      await this.store.put(objectKey, check, { contentType, signal: cutOff });
      await part.afterBody?.();
      await this.engine.faults.hit('file.object.written', { executionId: guardId });
      const committed = await this.db.transaction(async (tx) => {
        await checkRoomFor(tx, caller.organizationId, this.config.organizationLimits, 'fileBytes', check.bytes);
        const row = await tx.one<FileView>(
          {
            name: 'files.commit_upload',
            text: `UPDATE files SET state = 'ready', bytes = $2, sha256 = $3
                    WHERE id = $1 AND state = 'uploading' AND upload_deadline > now() RETURNING ${FILE_VIEW_COLUMNS}`,
            values: [fileId, check.bytes, check.sha256()],
          },
        );
        if (row !== undefined) await FILE_UPLOAD_GUARD.signal(this.engine.in(tx), guardId, FILE_SETTLED_SIGNAL, null);
        return row;
      });
      if (committed === undefined) throw new Error('the upload ran past its deadline');
      return committed;
    } catch (error) {
      part.body.resume();
      await this.discard(fileId, objectKey, guardId);
      if (error instanceof ContentTypeMismatch) {
        throw new InvalidInput([{ path: 'file', message: `the bytes are not ${error.contentType} as the part's content type says` }]);
      }
      throw error;
    }
  }

  /** Removes a failed upload's bytes and row now; its guard is told (and would remove them itself later). */
  private async discard(fileId: string, objectKey: string, guardId: string): Promise<void> {
    try {
      await this.store.delete(objectKey);
      await this.db.transaction(async (tx) => {
        await tx.query({ name: 'files.discard_upload', text: `DELETE FROM files WHERE id = $1 AND state = 'uploading'`, values: [fileId] });
        await FILE_UPLOAD_GUARD.signal(this.engine.in(tx), guardId, FILE_SETTLED_SIGNAL, null);
      });
    } catch (error) {
      // The guard removes them after the deadline.
      this.logger.warn(`a failed upload's bytes stay until its guard removes them: ${(error as Error).message}`);
    }
  }
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 255 || [...trimmed].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
    throw new InvalidInput([{ path: 'file', message: 'the part needs a filename of 1-255 characters without control characters' }]);
  }
  return trimmed;
}
