/** What the API shows of a file (decision 028). */
export interface FileView {
  readonly id: string;
  readonly name: string;
  readonly contentType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly createdAt: Date;
}

/** The columns of a FileView, for handlers that read `files` (also in RETURNING). */
export const FILE_VIEW_COLUMNS = `id, name, content_type AS "contentType", bytes::float8 AS bytes, sha256, created_at AS "createdAt"`;
