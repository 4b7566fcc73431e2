import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { Engine } from '@openbot/engine';
import { Database } from '../../../platform/src/database/sql';
import { OBJECT_STORE, type ObjectStore } from '../../../platform/src/object-store/object-store';
import { DeleteFileHandler } from './commands/delete-file.command';
import { UploadFileHandler } from './commands/upload-file.command';
import { GetFileHandler } from './queries/get-file.query';
import { ListFilesHandler } from './queries/list-files.query';
import { OpenFileContentHandler } from './queries/open-file-content.query';
import { fileDeleteWorkflow } from './workflows/file-delete.workflow';
import { fileUploadGuardWorkflow } from './workflows/file-upload-guard.workflow';
import { organizationFileSweepWorkflow } from './workflows/organization-file-sweep.workflow';

/** Files (decision 028): metadata in PostgreSQL, bytes in the object store, deletion as an execution. */
@Module({ providers: [UploadFileHandler, DeleteFileHandler, GetFileHandler, ListFilesHandler, OpenFileContentHandler] })
export class FilesModule implements OnModuleInit {
  constructor(
    @Inject(Engine) private readonly engine: Engine,
    @Inject(Database) private readonly db: Database,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
  ) {}

  onModuleInit(): void {
    this.engine.register(fileDeleteWorkflow({ store: this.store }));
    this.engine.register(fileUploadGuardWorkflow({ db: this.db, store: this.store }));
    this.engine.register(organizationFileSweepWorkflow({ store: this.store }));
  }
}
