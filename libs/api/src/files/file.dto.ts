import { ApiProperty } from '@nestjs/swagger';
import type { FileView } from '@openbot/features';

export class FileBody {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: "The upload part's filename" })
  name!: string;

  @ApiProperty({ example: 'image/png', description: "The part's content type (its essence in lower case; a charset is kept)" })
  contentType!: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  bytes!: number;

  @ApiProperty({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the bytes in hex; the download answers it, quoted, as `etag`' })
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class FilePage {
  @ApiProperty({ type: [FileBody] })
  data!: FileBody[];

  @ApiProperty({ type: String, nullable: true, description: 'Continues with older files' })
  next!: string | null;
}

export class FileDeleteBody {
  @ApiProperty({ format: 'uuid', description: 'The `file.delete` execution that removes the bytes from the object store' })
  executionId!: string;
}

/** The multipart body of an upload, for the OpenAPI document only (the route reads the stream itself). */
export class FileUploadForm {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The one file part; its filename and content type are kept' })
  file!: unknown;
}

export function toFileBody(file: FileView): FileBody {
  return {
    id: file.id,
    name: file.name,
    contentType: file.contentType,
    bytes: Number(file.bytes),
    sha256: file.sha256,
    createdAt: new Date(file.createdAt).toISOString(),
  };
}
