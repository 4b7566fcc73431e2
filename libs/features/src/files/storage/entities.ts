import { FileEntity } from './file.entity';

/** The files module's entity (an uploaded file's record; its bytes live in the object store). */
export const FILES_ENTITIES = [FileEntity] as const;
