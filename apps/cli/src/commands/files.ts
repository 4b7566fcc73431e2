import { unwrap } from '@openbot/client';
import type { Command } from 'commander';
import { createHash } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { connect, type Context } from '../context/context';
import { UsageError } from '../context/exit-codes';
import { formatFields, formatJson, type Column } from '../context/output';
import { pageOptions, pageQuery, printPage, type PageOptions } from './pages';
import { plain } from '../context/plain-calls';

/** A file as the API answers it (GET /v1/files/{id}). */
interface FileBody {
  readonly id: string;
  readonly name: string;
  readonly contentType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly createdAt: string;
}


const COLUMNS: ReadonlyArray<Column<FileBody>> = [
  ['id', (f) => f.id],
  ['name', (f) => f.name],
  ['type', (f) => f.contentType],
  ['bytes', (f) => f.bytes],
  ['created', (f) => f.createdAt],
];

/** The content type by file extension when `--type` is not given (the server checks images and PDFs against their bytes). */
const TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  xml: 'application/xml',
};

export function filesCommand(program: Command, context: Context): void {
  const files = program.command('files').description('files in the object store, for chat messages and tools');

  files
    .command('upload <path>')
    .description('upload a file (streamed from disk); prints its id and sha256')
    .option('--type <contentType>', 'its content type (default: by extension, else application/octet-stream)')
    .option('--name <name>', 'its name (default: the file name)')
    .option('--json', 'print the result as JSON')
    .action(async (path: string, options: { type?: string; name?: string; json?: boolean }) => {
      const info = await stat(path).catch(() => null);
      if (info === null || !info.isFile()) throw new UsageError(`${path} is not a readable file`);
      const type = options.type ?? TYPES[basename(path).split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
      // A Blob backed by the file on disk: fetch streams it, nothing is read whole into memory.
      const form = new FormData();
      form.append('file', await openAsBlob(path, { type }), options.name ?? basename(path));
      const client = await connect(context);
      const file = await unwrap<FileBody>(plain(client).POST('/v1/files', { body: form, bodySerializer: (body) => body }) as never);
      context.io.out(options.json ? formatJson(file) : describe(file));
    });

  files
    .command('get <id>')
    .description("print a file's metadata, or save its bytes with --output (the sha256 is checked against the etag)")
    .option('-o, --output <path>', 'write the bytes here (`-` for stdout)')
    .option('--json', 'print the metadata as JSON')
    .action(async (id: string, options: { output?: string; json?: boolean }) => {
      const client = await connect(context);
      if (options.output === undefined) {
        const file = await unwrap<FileBody>(plain(client).GET('/v1/files/{id}', { params: { path: { id } } }) as never);
        context.io.out(options.json ? formatJson(file) : describe(file));
        return;
      }
      const answer = await plain(client).GET('/v1/files/{id}/content', { params: { path: { id } }, parseAs: 'stream' });
      const body = await unwrap<WebReadableStream<Uint8Array> | null>(Promise.resolve(answer) as never);
      const etag = answer.response.headers.get('etag')?.replace(/^"|"$/g, '') ?? null;
      await save(Readable.fromWeb(body ?? new ReadableStream<Uint8Array>() as WebReadableStream<Uint8Array>), options.output, etag);
      if (options.output !== '-') context.io.err(`saved ${options.output}\n`);
    });

  pageOptions(files.command('list').description("list the organization's files, newest first")).action(async (options: PageOptions) => {
    const client = await connect(context);
    const page = await unwrap<{ data: FileBody[]; next: string | null }>(plain(client).GET('/v1/files', { params: { query: pageQuery(options) } }) as never);
    printPage(context, page, COLUMNS, options, 'files list');
  });

  files
    .command('delete <id>')
    .description('delete a file: its metadata now, its bytes by a file.delete execution')
    .action(async (id: string) => {
      const client = await connect(context);
      const deleted = await unwrap<{ executionId: string }>(plain(client).DELETE('/v1/files/{id}', { params: { path: { id } } }) as never);
      context.io.out(`${deleted.executionId}\n`);
    });
}

/** Writes the bytes to `output` (via a temporary name, renamed only when the sha256 matches the etag) or to stdout. */
async function save(body: Readable, output: string, etag: string | null): Promise<void> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  if (output === '-') {
    await pipeline(body, hashing, process.stdout);
  } else {
    const partial = `${output}.partial`;
    try {
      await pipeline(body, hashing, createWriteStream(partial));
    } catch (error) {
      await unlink(partial).catch(() => undefined);
      throw error;
    }
    const sha256 = hash.digest('hex');
    if (etag !== null && sha256 !== etag) {
      await unlink(partial).catch(() => undefined);
      throw new Error(`the downloaded bytes do not match the file's sha256 (${etag}); nothing was saved`);
    }
    await rename(partial, output);
  }
}

function describe(f: FileBody): string {
  return formatFields([
    ['id', f.id],
    ['name', f.name],
    ['contentType', f.contentType],
    ['bytes', f.bytes],
    ['sha256', f.sha256],
    ['createdAt', f.createdAt],
  ]);
}
