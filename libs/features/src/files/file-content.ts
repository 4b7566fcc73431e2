import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Content types whose first bytes are checked (decision 028): the image and document types the
 * model providers accept as parts. A declared type the bytes contradict is refused, so a file
 * sent to a model as `image/png` really is a PNG.
 */
const SIGNATURES: Readonly<Record<string, (head: Buffer) => boolean>> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => b.subarray(0, 6).toString('latin1') === 'GIF87a' || b.subarray(0, 6).toString('latin1') === 'GIF89a',
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  'application/pdf': (b) => b.subarray(0, 5).toString('latin1') === '%PDF-',
};

/** The bytes a signature needs at most. */
const HEAD_BYTES = 12;

/** Image types the providers take as image parts. */
export const IMAGE_CONTENT_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** Types sent to a model as text (their bytes as UTF-8). */
export const TEXT_CONTENT_TYPES: readonly string[] = ['text/plain', 'text/markdown', 'text/csv', 'text/html', 'application/json', 'application/xml', 'text/xml'];

/**
 * The type as stored: the essence in lower case (`text/plain`), with a `charset` parameter kept;
 * anything that is not `type/subtype` becomes `application/octet-stream`.
 */
export function normalizeContentType(given: string | undefined): string {
  if (given === undefined) return 'application/octet-stream';
  const [essence = '', ...params] = given.split(';').map((part) => part.trim());
  const type = essence.toLowerCase();
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(type)) return 'application/octet-stream';
  const charset = params.map((p) => /^charset=("?)([A-Za-z0-9._-]+)\1$/i.exec(p)?.[2]).find((c) => c !== undefined);
  return charset ? `${type}; charset=${charset.toLowerCase()}` : type;
}

/** The essence of a stored type (`text/plain; charset=utf-8` → `text/plain`). */
export function essenceOf(contentType: string): string {
  return contentType.split(';')[0]!.trim();
}

/** The bytes contradict the declared content type. */
export class ContentTypeMismatch extends Error {
  constructor(readonly contentType: string) {
    super(`the bytes are not ${contentType}`);
  }
}

/**
 * Passes the bytes through while it counts them, hashes them (sha256) and checks the first ones
 * against the declared type's signature; on a mismatch it fails before any byte passes on, so
 * the object store never receives a file that lies about its type.
 */
export class FileContentCheck extends Transform {
  private readonly hash = createHash('sha256');
  private readonly check: ((head: Buffer) => boolean) | undefined;
  private head: Buffer[] | null = [];
  private headBytes = 0;
  bytes = 0;

  constructor(readonly contentType: string) {
    super();
    this.check = SIGNATURES[essenceOf(contentType)];
    // Its failures reach the upload through the object store's write, which consumes this stream.
    this.on('error', () => undefined);
  }

  /** The hex sha256 of everything that passed (call after the end). */
  sha256(): string {
    return this.hash.digest('hex');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    if (this.head === null) return done(null, chunk);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < HEAD_BYTES) return done();
    this.releaseHead(done);
  }

  override _flush(done: TransformCallback): void {
    if (this.head === null) return done();
    this.releaseHead(done);
  }

  private releaseHead(done: TransformCallback): void {
    const head = Buffer.concat(this.head ?? []);
    this.head = null;
    if (this.check !== undefined && !this.check(head)) return done(new ContentTypeMismatch(essenceOf(this.contentType)));
    done(null, head);
  }
}
