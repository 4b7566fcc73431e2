import { Controller, Delete, Get, HttpCode, Inject, Param, PayloadTooLargeException, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { InvalidInput, parsePageRequest, type MemberCaller } from '@openbot/domain';
import { DeleteFile, GetFile, ListFiles, OpenFileContent, UploadFile } from '@openbot/features';
import { RUNTIME_CONFIG, type RuntimeConfig } from '@openbot/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiLimitReached } from '../errors/api-errors.decorator';
import { DeclaredErrorBody } from '../errors/error-bodies';
import { ApiPageQuery } from '../openapi/page-query';
import { FileBody, FileDeleteBody, FilePage, FileUploadForm, toFileBody } from './file.dto';

/** What @fastify/multipart hands out for one part (its own types belong to another Fastify copy). */
interface MultipartPart {
  readonly type: 'file' | 'field';
  readonly fieldname: string;
  readonly filename?: string;
  readonly mimetype?: string;
  readonly file?: Readable & { truncated?: boolean };
}

type MultipartRequest = FastifyRequest & {
  isMultipart(): boolean;
  parts(options: { limits: Record<string, number> }): AsyncIterableIterator<MultipartPart>;
};

/** Room for the multipart framing around the file's bytes. */
const FRAMING_BYTES = 64 * 1024;

const TOO_LARGE = new Set(['FST_REQ_FILE_TOO_LARGE', 'FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT']);

function onePartOnly(): InvalidInput {
  return new InvalidInput([{ path: 'file', message: 'the body must hold exactly one part, a file named `file`' }]);
}

@ApiTags('files')
@ApiBearerAuth()
@Access('member')
@Controller('v1/files')
export class FilesController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(RUNTIME_CONFIG) private readonly config: RuntimeConfig,
  ) {}

  @Post()
  @Requires('files.write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Upload a file',
    description:
      '`multipart/form-data` with exactly one part, a file named `file`; its filename and content type are kept, with the sha256 of the bytes. ' +
      'The bytes stream to the object store as they arrive (never held whole in memory). ' +
      'An image (png, jpeg, gif, webp) or PDF content type that the first bytes contradict is 400 `InvalidInput` (path `file`), as is a missing, extra or differently named part. ' +
      'A file larger than `OPENBOT_FILE_MAX_BYTES` is 413 `PayloadTooLarge`. An upload that breaks off leaves no file.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ type: FileUploadForm })
  @ApiCreatedResponse({ type: FileBody })
  @ApiResponse({ status: 413, description: 'PayloadTooLarge: the file is larger than `OPENBOT_FILE_MAX_BYTES`', type: DeclaredErrorBody })
  @ApiErrors(400, 401, 403)
  @ApiLimitReached('fileBytes')
  async upload(@CurrentMember() caller: MemberCaller, @Req() request: FastifyRequest): Promise<FileBody> {
    const multipart = request as MultipartRequest;
    if (typeof multipart.isMultipart !== 'function' || !multipart.isMultipart()) {
      throw new InvalidInput([{ path: 'file', message: 'the body must be multipart/form-data with one file part named `file`' }]);
    }
    const maxBytes = this.config.files.maxBytes;
    const declared = Number(request.headers['content-length']);
    // A body that says it is too large is refused before a byte is read.
    if (Number.isFinite(declared) && declared > maxBytes + FRAMING_BYTES) throw new PayloadTooLargeException();
    const parts = multipart.parts({ limits: { fileSize: maxBytes, files: 2, fields: 4, parts: 6 } });
    try {
      const first = await parts.next();
      const part = first.done ? undefined : first.value;
      if (part === undefined || part.type !== 'file' || part.fieldname !== 'file' || part.file === undefined) throw onePartOnly();
      const file = part.file;
      const view = await this.commands.execute(
        new UploadFile(caller, {
          name: part.filename ?? '',
          contentType: part.mimetype,
          body: file,
          afterBody: async () => {
            if (file.truncated === true) throw new PayloadTooLargeException();
            const next = await parts.next();
            if (!next.done) {
              (next.value as MultipartPart).file?.resume();
              throw onePartOnly();
            }
          },
        }),
      );
      return toFileBody(view);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && TOO_LARGE.has(code)) throw code === 'FST_REQ_FILE_TOO_LARGE' ? new PayloadTooLargeException() : onePartOnly();
      // The client went away mid-body: its fault, not the server's (no error record, nobody reads the answer).
      if (code === 'FST_MP_PREMATURE_CLOSE' || request.raw.aborted || request.raw.readableAborted) {
        throw new InvalidInput([{ path: 'file', message: 'the upload broke off before its end' }]);
      }
      if (error instanceof Error && /^(Unexpected end of (form|multipart data)|Malformed part header|Part terminated early)/.test(error.message)) {
        throw new InvalidInput([{ path: 'file', message: 'the multipart body is malformed' }]);
      }
      throw error;
    }
  }

  @Get()
  @Requires('files.read')
  @ApiOperation({ summary: "The organization's files, newest first", description: 'Newest first (descending `id`); `next` continues with older ones.' })
  @ApiPageQuery()
  @ApiOkResponse({ type: FilePage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('after') after?: string, @Query('limit') limit?: string): Promise<FilePage> {
    const page = await this.queries.execute(new ListFiles(caller, parsePageRequest(after, limit)));
    return { data: page.data.map(toFileBody), next: page.next };
  }

  @Get(':id')
  @Requires('files.read')
  @ApiOperation({ summary: "One file's metadata" })
  @ApiOkResponse({ type: FileBody })
  @ApiErrors(401, 403, 404)
  async get(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<FileBody> {
    return toFileBody(await this.queries.execute(new GetFile(caller, id)));
  }

  @Get(':id/content')
  @Requires('files.read')
  @ApiOperation({
    summary: "A file's bytes",
    description:
      'Streams the bytes from the object store with `content-type`, `content-length`, `etag` (the sha256 in hex, quoted), ' +
      '`content-disposition: attachment` and `x-content-type-options: nosniff`. A matching `if-none-match` is 304 without a body.',
  })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'The bytes', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 304, description: 'Not modified: `if-none-match` names this etag' })
  @ApiErrors(401, 403, 404)
  async content(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { file, body } = await this.queries.execute(new OpenFileContent(caller, id));
    const etag = `"${file.sha256}"`;
    const common = { etag, 'x-content-type-options': 'nosniff', 'cache-control': 'private, no-cache' };
    const match = request.headers['if-none-match'];
    if (typeof match === 'string' && match.split(',').some((tag) => tag.trim() === etag || tag.trim() === `W/${etag}`)) {
      body.destroy();
      await reply.code(304).headers(common).send();
      return;
    }
    await reply
      .code(200)
      .headers({
        ...common,
        'content-type': file.contentType,
        'content-length': String(file.bytes),
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
      })
      .send(body);
  }

  @Delete(':id')
  @Requires('files.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Delete a file',
    description:
      'The metadata disappears at once (the file answers 404 from then on); a `file.delete` execution removes the bytes from the object store, retried until it succeeds. ' +
      'Messages that named the file reach later Turns as a short text saying it was deleted.',
  })
  @ApiAcceptedResponse({ type: FileDeleteBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<FileDeleteBody> {
    return this.commands.execute(new DeleteFile(caller, id));
  }
}
